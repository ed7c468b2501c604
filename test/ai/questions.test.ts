/** What a question asks, read in time linear in its length whatever its spacing. */
import { describe, expect, it } from 'vitest';
import { asksForOverview, asksForRoomOverview, repeatsQuestion, withoutCourtesies } from '../../src/ai/questions.js';

/** Spaces enough that a scan quadratic in them holds the event loop for minutes, not milliseconds. */
const RUN = ' '.repeat(128_000);

describe('question cues on long runs of spaces', () => {
  it('tells a repeated question in a sentence with a long run of spaces after its question mark', () => {
    expect(repeatsQuestion(`Is the ferry late?${RUN}x`, 'is the ferry late')).toBe(false);
    expect(repeatsQuestion(`Is the ferry late?${RUN}`, 'is the ferry late')).toBe(true);
    expect(repeatsQuestion('Is the ferry late? [2] ', 'is the ferry late')).toBe(true);
    expect(repeatsQuestion('Is the ferry late? (12)', 'is the ferry late')).toBe(true);
    expect(repeatsQuestion('Is the ferry late? It is.', 'is the ferry late')).toBe(false);
  });

  it('tells an overview question with a long run of spaces after its last word', () => {
    expect(asksForOverview(`What is the harbour plan about${RUN}x`)).toBe(false);
    expect(asksForOverview(`What is the harbour plan about${RUN}?${RUN}`)).toBe(true);
    expect(asksForOverview('What was the harbour plan about ?')).toBe(true);
  });
});

describe('"what happened?"', () => {
  it('asks for the story as a whole; what happened next, or to something named, asks a fact', () => {
    for (const q of ['What happened?', "what's going on here?", 'What has happened', 'What just happened ?', 'What happened then?'])
      expect(asksForOverview(q), q).toBe(true);
    for (const q of ['What happened next?', 'What happened to the Meridian stablecoin?', 'What is going on with the tram?'])
      expect(asksForOverview(q), q).toBe(false);
  });
});

describe('a question of the main argument', () => {
  it('asks for an overview, as "the main point" does', () => {
    for (const q of [
      'What is the main argument of this post?',
      'What is the central argument?',
      "What's the main message?",
      'What are the key messages?',
      "What's the bottom line?",
    ])
      expect(asksForOverview(q), q).toBe(true);
    for (const q of ['What argument did the minister make?', 'What is the main road?']) expect(asksForOverview(q), q).toBe(false);
  });
});

describe('a question said with courtesies', () => {
  it('is read without a greeting or announcement before it and thanks after it', () => {
    expect(withoutCourtesies('hey, how many visits were there?')).toBe('how many visits were there?');
    expect(withoutCourtesies('Hey AI, quick question: how many visits were there, please?')).toBe('how many visits were there?');
    expect(withoutCourtesies('one more thing - who runs the pilot? thanks a lot!')).toBe('who runs the pilot?');
    expect(withoutCourtesies('Hi all… when does it open? Cheers')).toBe('when does it open?');
  });

  it('keeps words that say what is asked about, and a question of courtesies alone', () => {
    expect(withoutCourtesies('Budget question: how much did it cost?')).toBe('Budget question: how much did it cost?');
    expect(withoutCourtesies('So, how many visits were there?')).toBe('So, how many visits were there?');
    expect(withoutCourtesies('Who led the cheers?')).toBe('Who led the cheers?');
    expect(withoutCourtesies('hey, thanks!')).toBe('hey, thanks!');
    expect(withoutCourtesies('Is the heyday over, please?')).toBe('Is the heyday over?');
  });
});

describe('"what\'s new?", "what went wrong?"', () => {
  it('asks for the room’s news as a whole, of the room’s own subject when it names one', () => {
    for (const q of [
      'What went wrong?',
      "What's new?",
      "What's the latest?",
      'Any news?',
      'any updates today?',
      "What's new in tech?",
      'What is the story here?',
    ])
      expect(asksForRoomOverview(q, 'Recent in Tech & Science'), q).toBe(true);
    // Of something the room's subject does not name: that thing's news, a fact.
    for (const q of ["What's new with the K1?", 'What went wrong with the migration?']) {
      expect(asksForOverview(q), q).toBe(true);
      expect(asksForRoomOverview(q, 'Recent in Tech & Science'), q).toBe(false);
    }
    expect(asksForOverview(`Any news in tech${RUN}x`)).toBe(false);
  });

  it('reads "what is being done about it?" as the room’s news, and what is done about another thing as that thing’s', () => {
    const topic = 'Port Avelin measles outbreak reaches 140 cases';
    for (const q of [
      'What is being done about it?',
      "What's being done?",
      'What has been done about the outbreak?',
      'What are the authorities doing about it?',
    ])
      expect(asksForRoomOverview(q, topic), q).toBe(true);
    expect(asksForRoomOverview('What is being done about the tram?', topic)).toBe(false);
    // Not a question of what is being done.
    for (const q of ['What is done with the samples?', 'What are they doing at the clinic?']) expect(asksForOverview(q), q).toBe(false);
  });

  it('reads "what did the spreadsheet show?" as an overview of the thing, the room’s when its title names it', () => {
    const topic = 'We tried the four-day week at a 40-person agency. Here is the spreadsheet.';
    for (const q of [
      'What did the spreadsheet show?',
      'What does the spreadsheet say?',
      'So what did the spreadsheet find?',
      'what has this spreadsheet revealed',
    ])
      expect(asksForRoomOverview(q, topic), q).toBe(true);
    expect(asksForOverview('What did the study conclude?')).toBe(true);
    expect(asksForRoomOverview('What did the study conclude?', topic)).toBe(false);
    // Something found or shown, not what a thing tells.
    for (const q of ['What did the divers find in the wreck?', 'What did Ann show us at the meeting?', 'What does the chart show about fees?'])
      expect(asksForOverview(q), q).toBe(false);
  });
});

describe('"what is the main lesson?"', () => {
  it('asks for an overview, as the main point does', () => {
    for (const q of ['What is the main lesson?', "What's the key takeaway?", 'What are the big lessons of the outage?', 'main lesson of the post?'])
      expect(asksForOverview(q), q).toBe(true);
    expect(asksForOverview('What lesson did the archive learn?')).toBe(false);
  });
});

describe('"why does it matter?"', () => {
  it('asks for the story as a whole; why a named thing matters asks a fact', () => {
    for (const q of ['Why does it matter?', 'Why is this important?', "What's the significance?", 'why should I care', 'So what?', 'Why is it such big news?'])
      expect(asksForOverview(q), q).toBe(true);
    for (const q of ['Why does 26 minutes matter?', 'Why is the divertor important?', 'What is the significance of the divertor?'])
      expect(asksForOverview(q), q).toBe(false);
  });
});

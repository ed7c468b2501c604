/**
 * Questions a user asked in the demo (fixtures/demo) that the built-in AI abstained on or answered
 * wrongly: "how long" asked in the item's room or naming it from another room's, a question after
 * an unrelated sentence, a follow-up that leans on the answer before it, a question naming another
 * item, a question asked again, "and why?" after an answer, a question of polarity ("who voted against …", "who supported …"), a cost, a span of time, a reason, who did something. Asked over HTTP in a real app with the local providers and the
 * demo content, each in a thread of its own unless it follows an exchange.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { demoEntries, defaultDemoDir, putDemoEntries } from '../../src/content/ingest/seed.js';
import { NOT_COVERED } from '../../src/ai/grounded-prompt.js';
import { ABSTAIN_TEXT } from '../../src/rag/answer-run.js';
import { testApp } from '../helpers.js';
import { createThread } from '../store/new-thread.js';
import { joined } from '../rooms/helpers.js';

let app: FastifyInstance;
let close: () => Promise<void>;
beforeAll(async () => {
  const t = await testApp({ ASK_LIMIT_USER: '1000', ASK_LIMIT_ROOM: '1000', ASK_LIMIT_IP: '1000' } as never, { roomOptions: { shutdownGraceMs: 100 } });
  ({ app, close } = t);
  await app.ready();
  const seeded = await putDemoEntries(app.salon.ingest!.pipeline, await demoEntries(defaultDemoDir()));
  expect(seeded.failures).toEqual([]);
}, 60_000);
afterAll(async () => {
  await close?.();
});

/** Asks in a thread of its own unless given one: the answers before it are no part of the question. */
async function ask(roomId: string, text: string, threadId?: string): Promise<{ answer: string; sources: { id: string }[] }> {
  const thread = threadId ?? (await threadWith(roomId, []));
  const res = await app.inject({ method: 'POST', url: `/api/v1/rooms/${roomId}/ask`, payload: { text, threadId: thread } });
  expect(res.statusCode).toBe(200);
  const body = res.json();
  expect(body.answer).not.toBe(ABSTAIN_TEXT);
  expect(body.answer).not.toBe(NOT_COVERED);
  return body;
}

let threads = 0;
/** A new thread of `roomId` holding `said` (name, text) in order, for a follow-up. */
async function threadWith(roomId: string, said: [name: string, text: string][]): Promise<string> {
  const { store } = app.salon;
  const thread = await createThread(store, { id: `thr_test_${++threads}`, roomId, title: 'a question' }, 'test');
  for (const [name, text] of said) {
    const author = name === 'Salon AI' ? { id: 'assistant', name, kind: 'assistant' as const } : { id: `u_${name}`, name, kind: 'user' as const };
    await store.appendMessage({ roomId, threadId: thread.id, author, text });
  }
  return thread.id;
}

describe('a "how long" question', () => {
  it('is answered with how long, not with a sentence that says "long"', async () => {
    expect((await ask('news_n05', 'How long did the stellarator sustain plasma?')).answer).toMatch(/^[^[]*26 minutes/);
  });

  it('is answered with a time, not with any number beside the question’s words', async () => {
    // "6 MW for runs of at least ten minutes" holds "runs" and a number, but counts nothing asked.
    expect((await ask('news_n12', 'How long did Orrery-2 run?')).answer).toMatch(/^[^[]*ran a hydrogen plasma for 26 minutes/);
    expect((await ask('topic_science', 'How long did Orrery-2 run?')).answer).toMatch(/^[^[]*ran a hydrogen plasma for 26 minutes/);
  });

  it('in the item’s room is answered with the span it ran, not a planned one nor another span the item names', async () => {
    // The item's passage leaves out its own "26 minutes" sentence; its "plans to push … for runs of
    // at least ten minutes", "the run ended as planned" and "an 18-month upgrade" came first.
    expect((await ask('news_n05', 'How long did Orrery-2 run?')).answer).toMatch(/^[^[]*ran a hydrogen plasma for 26 minutes/);
  });

  it('naming another item is answered from that item, not from the room’s own', async () => {
    const { answer, sources } = await ask('news_n01', 'How long did Orrery-2 sustain plasma?');
    expect(answer).toMatch(/^[^[]*26 minutes/);
    expect(sources.map((s) => s.id)).not.toContain('news_n01');
  });
});

describe('a question saying "it" in an item’s room, with nothing before it in the chat', () => {
  it('is answered from the room’s item, not from another item holding its one word', async () => {
    // The right-to-repair law's "at least eight years after the last unit" held "last".
    const { answer, sources } = await ask('news_n02', 'How long did it last?');
    expect(answer).toMatch(/^[^[]*(six-hour outage|6 hours and 12 minutes)/);
    expect(sources.map((s) => s.id)).toEqual(['news_n02']);
  });

  it('saying too little to stand alone is not answered from another item', async () => {
    // The container ships' fuel deal ("to buy 400,000 tonnes a year") answered it in the laptop's room.
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/rooms/news_n04/ask',
      payload: { text: 'Should I buy one?', threadId: await threadWith('news_n04', []) },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().answer).not.toMatch(/methanol|tonnes/);
    expect(
      res
        .json()
        .sources.map((s: { id: string }) => s.id)
        .filter((id: string) => id !== 'news_n04'),
    ).toEqual([]);
  });

  it('naming another item is still answered from that item', async () => {
    const { answer, sources } = await ask('news_n01', 'How long did Orrery-2 sustain it?');
    expect(answer).toMatch(/26 minutes/);
    expect(sources.map((s) => s.id).filter((id) => id !== 'news_n01')).not.toEqual([]);
  });
});

describe('a video’s chapter line', () => {
  it('does not answer "when" with its place in the video', async () => {
    // `00:00 Opening statements`, the council debate video's first chapter, answered it.
    expect((await ask('news_n11', 'When will the tram open?')).answer).not.toMatch(/\d:\d\d /);
  });

  it('answers where in the video something is', async () => {
    expect((await ask('video_v07', 'At what minute do the opening statements start?')).answer).toMatch(/^00:00 Opening statements \[\d\]$/);
  });
});

describe('a question spelled the American way', () => {
  it('is answered from sources spelled the British way', async () => {
    // TesseraDB's "Tessera Community Licence": the fork's sentence came first, holding none of it.
    expect((await ask('news_n03', 'What is the new license?')).answer).toMatch(/^[^[]*(new licence|Tessera Community Licence)/);
  });
});

describe('"how long did … last?" in a topic room', () => {
  it('is answered about what it names, not with another story’s "last"', async () => {
    // The seabed commission's pause "would last at least until … March 2027" came first: `last` was the rarest word.
    const { answer } = await ask('topic_science', 'How long did the plasma last?');
    expect(answer).toMatch(/^[^[]*plasma/);
    expect(answer).not.toMatch(/commission|March 2027/);
  });
});

describe('"what happened to …?"', () => {
  it('is answered with what happened to what it names, not with a sentence saying "happened"', async () => {
    // Orrery-2's `No fusion happened, and that is fine.` came first: "happened" was the question's rarest word.
    const { answer } = await ask('topic_business', 'What happened to the Meridian stablecoin?');
    expect(answer).toMatch(/^[^[]*Meridian/);
    expect(answer).not.toMatch(/fusion/);
  });
});

describe('a question naming a model such as "VS-2"', () => {
  it('counts the name once, and is answered with what it asks in the room of an item that names it elsewhere', async () => {
    // "VS-2" was the rare terms "vs" and "2": the passage naming the cell's cathode won over the one
    // giving its energy density, and the room's own item pulled that passage's sentence first.
    const density = /^[^[]*energy density of 168 watt-hours per kilogram/;
    expect((await ask('news_n12', 'What energy density did the Veldra VS-2 cell reach?')).answer).toMatch(density);
    expect((await ask('news_n01', 'What energy density did the Veldra VS-2 cell reach?')).answer).toMatch(density);
    expect((await ask('topic_tech', 'What energy density did the Veldra VS-2 cell reach?')).answer).toMatch(density);
  });
});

describe('a question in other words than its answer’s', () => {
  it('"how much did the wait times drop?" is answered as "by how many minutes did waits fall?" is, not abstained on', async () => {
    // Its few words scored under the built-in embedder's relevance threshold, and "drop" was not "fell".
    const fell = /^The median time from arrival [^[]*fell from 47 minutes [^[]*to 25 minutes\./;
    expect((await ask('news_n18', 'how much did the wait times drop?')).answer).toMatch(fell);
    expect((await ask('topic_health', 'how much did the wait times drop?')).answer).toMatch(fell);
    // Its words are the headline's: the headline's clause answers first, the sentence telling how much after it.
    const byHowMany = (await ask('news_n18', 'By how many minutes did waits fall?')).answer;
    expect(byHowMany).toMatch(
      /^AI triage pilot cuts emergency waits by 22 minutes in Vessbridge\. \[1\] The median time from arrival [^[]*fell from 47 minutes/,
    );
  });
});

describe('a question of what a thing the room’s title names shows', () => {
  it('is answered with the room’s overview, not with another item’s sentence saying "show"', async () => {
    // A stellarator video's `to show the difference between a tokamak and a stellarator` answered.
    const { answer, sources } = await ask('post_p09', 'What did the spreadsheet show?');
    expect(answer).toMatch(/^Greyhound Studio was one of the 61 firms in Lowmark's four-day week pilot\./);
    expect(sources.map((s) => s.id)).toEqual(['post_p09']);
  });
});

describe('a question of a number or a span, in its headline’s words', () => {
  it('is answered with the headline’s clause holding it, before what the text says of it', async () => {
    // "How long is the delay?" got a comment's `The delay is just another boring problem.`: the text says `pushed back … by nine months`.
    expect((await ask('news_n12', 'How long is the delay?')).answer).toMatch(
      /^Veldra Energy delays Skarvik gigafactory by nine months as cathode supplier falters\. \[1\]/,
    );
    expect((await ask('news_n16', 'How many ships did Aurelian order?')).answer).toMatch(
      /^Aurelian Lines orders 12 methanol-powered container ships for \$1\.68 billion\. \[1\] Aurelian Lines, the container shipping company [^[]*has ordered 12 container ships/,
    );
    // Not the hottest vent's `362 °C`, which holds one of the question's terms and a number.
    const vents = (await ask('news_n06', 'How many vents did the survey map?')).answer;
    expect(vents).toMatch(/^Survey maps 31 hydrothermal vents on the Calloway Ridge\. \[1\]/);
    expect(vents).not.toContain('362');
  });
});

describe('a question of how much something changed, in its headline’s words', () => {
  it('is answered with the headline’s clause telling it, where no sentence of the text says it in those words', async () => {
    // The text says `assessed … 22 minutes sooner` and `the median time … fell from 47 minutes`, never "waits":
    // "how much did waits drop?" abstained, and "how much shorter were the waits?" got `waited a median of 6 minutes longer`.
    const headline = /^AI triage pilot cuts emergency waits by 22 minutes in Vessbridge\. \[1\]$/;
    for (const question of ['How much did waits drop?', 'How much shorter were the waits?', 'By how much did the pilot cut waits?'])
      expect((await ask('news_n18', question)).answer).toMatch(headline);
    expect((await ask('topic_health', 'How much did waits drop?')).answer).toMatch(headline);
    // "How much cheaper are fees?" abstained.
    expect((await ask('news_n10', 'How much cheaper are fees?')).answer).toMatch(/^Corvid's 'Lantern' upgrade cuts rollup fees by about 80%\. \[1\]/);
  });

  it('goes on with the text’s sentence telling how much it changed, and leaves a question the headline does not name to the text', async () => {
    const fees = (await ask('news_n10', 'How much did fees drop?')).answer;
    expect(fees).toMatch(/^Corvid's 'Lantern' upgrade cuts rollup fees by about 80%\. \[1\] According to data [^[]*fell from \$0\.042 [^[]*to \$0\.007/);
    expect((await ask('news_n10', 'How much did the fee fall on Skylark?')).answer).toMatch(/^According to data [^[]*fell from \$0\.042/);
  });
});

describe('a question of how much', () => {
  it('asking a cost is answered with an amount of money, not with another number beside the item’s name', async () => {
    expect((await ask('news_n05', 'How much did Orrery-2 cost?')).answer).toMatch(/^Orrery-2 was built for €1\.9 billion/);
  });

  it('asking how much a cost rose is answered with the figure, not the reason it rose', async () => {
    const { answer } = await ask('news_n11', 'How much did the Harbour Line’s cost increase since 2023?');
    expect(answer).toMatch(/^[^[]*€960 million/);
    expect(answer).not.toMatch(/^Achterberg said the increase/);
  });
});

describe('a question of who someone is', () => {
  it('is answered with the sentence saying what they are, though it names nobody new', async () => {
    expect((await ask('news_n11', 'Who is Selma Achterberg?')).answer).toMatch(/^[^[]*said Selma Achterberg, the deputy mayor responsible for transport/);
  });

  it('is read so when typed with a phone’s apostrophe', async () => {
    // "Who’s" (U+2019) was no "who's": the item's pull went to its sentences naming someone new.
    expect((await ask('news_n11', 'Who’s Selma Achterberg?')).answer).toMatch(/^[^[]*said Selma Achterberg, the deputy mayor responsible for transport/);
  });
});

describe('a question after an unrelated sentence', () => {
  it('is answered from its question, in the item’s room and in a topic room', async () => {
    expect((await ask('news_n05', 'My locker code is 7391. How long did the stellarator sustain plasma?')).answer).toMatch(/^[^[]*26 minutes/);
    expect((await ask('topic_science', 'My locker code is 7391. How long did Orrery-2 sustain plasma?')).answer).toMatch(/^[^[]*26 minutes/);
    const long = 'My locker code is 7391, my bike lock is 0420 and my badge says Blue Falcon. How long did Orrery-2 sustain plasma?';
    expect((await ask('news_n05', long)).answer).toMatch(/^[^[]*26 minutes/);
  });

  it('is not answered with the unrelated sentence said before in the discussion', async () => {
    const threadId = await threadWith('news_n05', [['Ann', 'My locker code is 7391, remind me later']]);
    const { answer } = await ask('news_n05', 'My locker code is 7391. How long did the stellarator sustain plasma?', threadId);
    expect(answer).toMatch(/^[^[]*26 minutes/);
    expect(answer).not.toContain('locker');
  });
});

/** An exchange both follow-up tests lean on: who voted against the Harbour Line budget, and why. */
const WHO_VOTED_AGAINST: [string, string][] = [
  ['Ann', '@ai Who voted against the Harbour Line budget?'],
  [
    'Salon AI',
    "The Lowmark Liberals and the Citizens' Alliance voted against, arguing that the cost had grown too fast and that the route would disrupt businesses on Quay Street for years. [1]",
  ],
];

describe('a follow-up that leans on the answer before it', () => {
  it('reads "they" as whom the answer named', async () => {
    const threadId = await threadWith('news_n05', WHO_VOTED_AGAINST);
    const { answer } = await ask('news_n05', 'and what did they argue?', threadId);
    expect(answer).toContain('the cost had grown too fast');
  });
});

describe('"and why?" after an answer', () => {
  it('asks the reason of what was asked, not for a sentence about its subject', async () => {
    const threadId = await threadWith('news_n11', WHO_VOTED_AGAINST);
    expect((await ask('news_n11', 'and why?', threadId)).answer).toMatch(/^[^[]*arguing that the cost had grown too fast/);
  });

  it('is answered with a sentence giving the reason, not with the question it follows', async () => {
    const threadId = await threadWith('news_n11', [
      ['Ann', '@ai How much did the Harbour Line’s cost go up since 2023?'],
      ['Salon AI', 'The project’s estimated cost was €960 million when it was first presented in 2023. [1]'],
    ]);
    const { answer } = await ask('news_n11', 'and why?', threadId);
    expect(answer).toMatch(/^Achterberg said the increase since 2023 was mostly due to construction inflation/);
    expect(answer).not.toContain('@ai');
  });
});

describe('a question naming another item than the room’s', () => {
  it('is answered from that item, without the room’s own item pulling its words first', async () => {
    const { answer, sources } = await ask('news_n11', 'How much does the Kestrel K1 cost?');
    expect(answer).toContain('€899');
    expect(sources.map((s) => s.id)).not.toContain('news_n11');
  });
});

describe('a question whose words a source says otherwise', () => {
  it('is answered from the vessels’ total price for the ships’ cost', async () => {
    // The headline's `… ships for $1.68 billion`, then the body's `The vessels … for a total price
    // of $1.68 billion`, which holds neither "ships" nor "cost" but gives the headline's figure again.
    expect((await ask('news_n16', 'How much did the ships cost?')).answer).toMatch(/^[^[]*\$1\.68 billion\. \[1\] [^[]*total price of \$1\.68 billion/);
  });

  it('goes on only with sentences naming what is priced, not another thing’s cost', async () => {
    // The plant's `will cost €2.3 billion` and a battery cell's `cost target`, in a topic room, hold
    // "cost" and an amount, but not the ships; a post's `cells can be shipped … at zero volts` holds
    // "ships" and no price.
    for (const room of ['news_n16', 'topic_business']) {
      const { answer } = await ask(room, 'How much did the ships cost?');
      expect(answer).toMatch(/(?:^|\] )The vessels, [^[]*total price of \$1\.68 billion/);
      expect(answer).not.toMatch(/€2\.3 billion|cost target|cell-cost|shipped/);
    }
  });
});

describe('a price or a count the room’s headline gives', () => {
  it('is answered with the headline, not with another source naming the thing beside a figure', async () => {
    // Before: a video's `€1.42 billion plan … trams` and `A month with Kestrel's €899 RISC-V laptop`
    // led in the article's own room.
    expect((await ask('news_n11', 'How much will the tram cost?')).answer).toMatch(
      /^Vessbridge council approves €1\.42 billion for the Harbour Line tram\. \[1\]/,
    );
    const laptop = await ask('news_n04', 'How much does the laptop cost?');
    expect(laptop.answer).toMatch(/^Kestrel K1, a €899 RISC-V laptop, starts shipping\. \[1\]/);
    expect(laptop.sources.map((s) => s.id)).toEqual(['news_n04']);
  });

  it('tells a change asked of people by the headline, then the article’s own sentence giving its figure', async () => {
    // Before: the weight-loss post's `47% of people on the drug lost at least 15%` led in the article's room.
    const { answer, sources } = await ask('news_n17', 'How much weight did people lose?');
    expect(answer).toMatch(/^Weekly weight-loss pill orvaglutide cuts body weight by 13\.2% in phase 3 trial\. \[1\] [^[]*lost an average of 13\.2 per cent/);
    expect(sources.map((s) => s.id)).toEqual(['news_n17']);
  });

  it('reads "how many people …?" by what they did, not by any count of people', async () => {
    // Before: `Tollgate … employs about 240 people` led.
    expect((await ask('news_n09', 'How many people were affected?')).answer).toMatch(/^About 212,000 customers [^[]* are affected/);
  });

  it('counts the thing asked, whatever verb says it was counted, and goes on only with counts of it', async () => {
    // Before: `the scientists found … four candidate new species` around the vents, no 31.
    expect((await ask('news_n06', 'How many vents were found?')).answer).toBe('Survey maps 31 hydrothermal vents on the Calloway Ridge. [1]');
  });
});

describe('a question the item’s description answers', () => {
  it('is answered from it when the passage chosen from the item does not', async () => {
    // Before: abstained over the post's key dates, which never say "effect".
    expect((await ask('post_p07', 'When does the law take effect?')).answer).toMatch(
      /^Lowmark's new right-to-repair law, passed 88-62 on 8 July, takes effect on 1 January 2027\. \[1\]/,
    );
  });
});

describe('a question asked again in the same thread', () => {
  it('is answered as it was the first time, not from the earlier answer’s second sentence', async () => {
    const threadId = await threadWith('news_n05', []);
    const first = await ask('news_n05', 'How long did the stellarator sustain plasma?', threadId);
    expect(first.answer).toMatch(/^[^[]*26 minutes/);
    expect((await ask('news_n05', 'How long did the stellarator sustain plasma, again?', threadId)).answer).toMatch(/^[^[]*26 minutes/);
  });
});

describe('a question of polarity', () => {
  it('"who voted against" is answered with who voted against, not who voted in favour', async () => {
    const against = /^The Lowmark Liberals and the Citizens' Alliance voted against, arguing/;
    expect((await ask('news_n11', 'Who voted against the Harbour Line budget?')).answer).toMatch(against);
    expect((await ask('topic_politics', 'Who voted against the Harbour Line budget?')).answer).toMatch(against);
    expect((await ask('news_n14', 'Who voted against the Durable Devices Act?')).answer).toMatch(/^The Lowmark Liberals voted against\. \[1\]/);
  });

  it('"who voted against" goes on with neither who voted in favour nor who voted against another act', async () => {
    for (const room of ['news_n11', 'topic_politics']) {
      const { answer } = await ask(room, 'Who voted against the Harbour Line budget?');
      expect(answer).not.toContain('voted in favour');
      expect(answer).not.toContain('The Lowmark Liberals voted against.');
    }
  });

  it('a negated question is answered with the sentence negating its words, not the one affirming them', async () => {
    expect((await ask('news_n12', 'What is not affected by the delay?')).answer).toMatch(/^The company's €220 million loan [^[]* is not affected/);
    // A negation its answer does not say again draws nothing: "four have returned", not "could not be compressed".
    expect((await ask('news_n15', 'How many firms did not keep the four-day week?')).answer).toMatch(/^[^[]*four have returned to their previous hours/);
  });

  it('"who opposed" is read as who was against, in the item’s room and in a topic room', async () => {
    expect((await ask('news_n11', 'Who opposed the Harbour Line budget?')).answer).toMatch(
      /^The Lowmark Liberals and the Citizens' Alliance voted against, arguing/,
    );
    expect((await ask('news_n14', 'Who opposed the Durable Devices Act?')).answer).toMatch(/^The Lowmark Liberals voted against\. \[1\]/);
    expect((await ask('topic_politics', 'Which party opposed the Durable Devices Act?')).answer).toMatch(/^The Lowmark Liberals voted against\. \[1\]/);
  });

  it('"who opposed" is answered with who voted against, not with a legal challenge against the same tram', async () => {
    expect((await ask('topic_politics', 'Who opposed the Harbour Line budget?')).answer).toMatch(
      /^The Lowmark Liberals and the Citizens' Alliance voted against, arguing/,
    );
  });

  it('"who supported" and "who backed" are read as who was in favour', async () => {
    const inFavour = /^The coalition of the Civic Greens, [^[]*voted in favour\./;
    expect((await ask('news_n11', 'Who supported the Harbour Line budget?')).answer).toMatch(inFavour);
    expect((await ask('topic_politics', 'Who backed the Harbour Line budget?')).answer).toMatch(inFavour);
    expect((await ask('news_n14', 'Who supported the Durable Devices Act?')).answer).toMatch(/^The governing coalition of [^[]* voted in favour/);
    // "Backed" is the sources' "supporting" too: this was "not covered".
    expect((await ask('news_n03', 'Who backed the fork?')).answer).toMatch(/^[^[]*signed a public letter supporting the fork/);
    // "Supported" as the sources say it still finds who did.
    expect((await ask('news_n18', 'Who supported the use of the technology?')).answer).toMatch(/^The Lowmark Nurses' Union said it supported the use/);
  });

  it('"who voted for" is read as who voted in favour, not as how many votes it passed by', async () => {
    expect((await ask('news_n14', 'Who voted for the Durable Devices Act?')).answer).toMatch(/^The governing coalition of [^[]* voted in favour/);
    expect((await ask('news_n11', 'Which parties voted for the Harbour Line budget?')).answer).toMatch(
      /^The coalition of the Civic Greens, [^[]*voted in favour\./,
    );
    expect((await ask('topic_politics', 'Who voted for the Harbour Line budget?')).answer).toMatch(
      /^The coalition of the Civic Greens, [^[]*voted in favour\./,
    );
  });

  it('"who voted in favour" still gets who voted in favour', async () => {
    expect((await ask('news_n11', 'Who voted in favour of the Harbour Line budget?')).answer).toMatch(
      /^The coalition of the Civic Greens, [^[]*voted in favour\./,
    );
  });
});

describe('a question whose answer the item’s lead sentence gives', () => {
  it('"when" is answered with the lead’s date, not a sentence further on holding the same words without one', async () => {
    // The passage was the window further on, naming the comet in more sentences: "magnitude 3.5,
    // which would make the comet visible" was quoted, and "the last comet … was in 2020".
    expect((await ask('news_n07', 'When will the comet be visible?')).answer).toMatch(/^[^[]*visible to the naked eye in October/);
  });
});

describe('a question of how many there will be', () => {
  it('is answered with the figure foretold, not with today’s count of the same thing', async () => {
    // "The bus routes 9 and 14, which the tram will largely replace, carry about 41,000 passengers a
    // day" holds "carry" too, and was quoted before the department's projection.
    expect((await ask('news_n11', 'How many passengers will the Harbour Line carry?')).answer).toMatch(/^[^[]*projects 68,000 passengers per weekday/);
  });
});

describe('a question of how long something is', () => {
  it('is answered with its length, though the sentence names it in another word', async () => {
    // "The 78-minute melodrama" holds no "film": "about 4 per cent of the film" and "2,100 hours …
    // restoring the film" were quoted.
    expect((await ask('news_n22', 'How long is the film?')).answer).toMatch(/^The 78-minute melodrama/);
  });
});

describe('a question of why', () => {
  it('is answered with the sentence giving the reason, not a commenter’s holding the same words', async () => {
    // 0xkelp's "The auditor resigning is the first time anybody read the footnotes." led.
    for (const room of ['news_n08', 'topic_crypto']) {
      expect((await ask(room, 'Why did the auditor resign?')).answer).toMatch(/^[^[]*resigned because it could not verify \$1\.3 billion of reserves/);
    }
  });
});

describe('a question of why whose reason only the headline names', () => {
  it('is answered with the sentence on the cause the headline gives', async () => {
    // `… workers vote to unionise after 'Ember Tide' crunch`: the crunch sentence shares no word
    // with the question, which drew a researcher's "When the flagship studio unionises …" and, in
    // the topic room, a commenter's and a post's question "… and you voted to unionise?".
    for (const room of ['news_n21', 'topic_culture']) {
      expect((await ask(room, 'Why did the workers vote to unionise?')).answer).toMatch(/^[^[]*more than 60 hours a week [^[]*known in the industry as crunch/);
    }
  });
});

describe('a question of why about a video’s subject', () => {
  it('is answered with the reason, not with the video’s chapter list', async () => {
    // The chapters (`22:10 Friday: withdrawals halted`, one sentence with the rest) held every word
    // of the question; the headline's `… after Meridian losses` names a cause its article tells
    // as the Meridian position's fall, never as "losses".
    for (const room of ['news_n09', 'topic_crypto']) {
      const { answer } = await ask(room, 'Why did Tollgate halt withdrawals?');
      expect(answer).toMatch(/^[^[]*Meridian/);
      expect(answer).not.toMatch(/Chapters|\d\d:\d\d [A-Z]/);
    }
  });
});

describe('a sentence ending with a unit after a number', () => {
  it('is quoted alone, not with the sentence after it', async () => {
    const { answer } = await ask('news_n06', 'How hot was the hottest vent?');
    expect(answer).toMatch(/^The hottest vent measured, named Lanternfield by the team, was venting fluid at 362 °C\. \[1\]/);
  });
});

describe('a question of who did something', () => {
  it('is answered from the passage that tells who did it, not from one naming the deed more often', async () => {
    // The item's passage was its end, naming the ships in more sentences: `older vessels built
    // between 2004 and 2008`, an analyst's `plant being built on time`; and for the film, `the
    // restored film will tour …`.
    for (const room of ['news_n16', 'topic_business']) {
      expect((await ask(room, 'Who will build the ships?')).answer).toMatch(/^[^[]*will be built by Seowon Heavy Industries/);
    }
    for (const room of ['news_n22', 'topic_culture']) {
      expect((await ask(room, 'Who restored the film?')).answer).toMatch(/^The archive's restoration team [^[]*restoring the film/);
    }
  });

  it('is answered with who did it, not the sentence naming the deed as a thing', async () => {
    // `signed a public letter supporting the fork` holds "fork" and "TesseraDB" and led.
    for (const room of ['news_n03', 'topic_tech']) {
      expect((await ask(room, 'Who forked TesseraDB?')).answer).toMatch(/^Within 48 hours of the announcement, a group of outside contributors had forked/);
    }
  });
});

describe('a question of who makes something', () => {
  it('is answered with its maker, not with a sentence where "makes" means another thing', async () => {
    // `Orvaglutide's half-life of about six days makes a weekly tablet possible` held both of the
    // question's words and told "makes": it led everywhere, and the maker went unnamed.
    for (const room of ['news_n17', 'topic_health', 'post_p10', 'video_v09']) {
      const { answer } = await ask(room, 'Who makes orvaglutide?');
      expect(answer).toMatch(/^[^[]*Calder/);
      expect(answer).not.toContain('makes a weekly tablet possible');
    }
  });
});

describe('a question in a topic room about a story another category reports', () => {
  it('is answered from the item that holds the question’s words, not from the room’s category alone', async () => {
    // The Tech room's only Veldra item is the cell's test; its funding round, which names the
    // gigafactory, was quoted, while the Business article and post on the delay give the reason.
    const { answer } = await ask('topic_tech', 'Why did Veldra delay the gigafactory?');
    expect(answer).toMatch(/^[^[]*(because its cathode supplier|caused by problems at Maelstrom Materials)/);
    expect(answer).not.toContain('Series C');
  });
});

describe('a question of why answered by a sentence without a reason', () => {
  it('goes on with the sentence that bears it out', async () => {
    // "Early reviews suggest it is not yet fast." was the whole answer.
    expect((await ask('news_n04', 'Why are early benchmarks mixed?')).answer).toMatch(
      /^Early reviews suggest it is not yet fast\. \[1\] In the cross-platform Corebench 7 test, review units scored 1,140 single-core/,
    );
  });
});

describe('a question writing a word with a hyphen', () => {
  it('is answered where the source writes it as one word', async () => {
    // "post" and "mortem" were not the article's "postmortem": the room abstained.
    expect((await ask('news_n02', 'Who wrote the post-mortem?')).answer).toMatch(/^According to the postmortem, signed by [^[]*Dana Okonkwo-Reyes/);
  });

  it('is answered as well written apart with a space, or as one word', async () => {
    // Both abstained: "post mortem" was two words no source holds; "postmortem" and "wrote" stand
    // in no sentence together, the article says who signed it.
    expect((await ask('news_n02', 'Who wrote the post mortem?')).answer).toMatch(/^According to the postmortem, signed by [^[]*Dana Okonkwo-Reyes/);
    expect((await ask('news_n02', 'Who wrote the postmortem?')).answer).toMatch(/^[^[]*Okonkwo-Reyes/);
  });

  it('quotes no sentence that only names the thing, outside the thing’s own room', async () => {
    // The one-term pass is the item's room's: anywhere, "who wrote the postmortem?" quoted a video
    // that walks through a postmortem and names no author.
    const threadId = await threadWith('news_n05', []);
    const res = await app.inject({ method: 'POST', url: '/api/v1/rooms/news_n05/ask', payload: { text: 'Who wrote the postmortem?', threadId } });
    const { answer } = res.json();
    expect([ABSTAIN_TEXT, NOT_COVERED].includes(answer) || /Okonkwo-Reyes/.test(answer), answer).toBe(true);
  });
});

describe('a question of who invested', () => {
  it('is answered by who led the round the company raised, in its rooms and in the other Veldra article’s', async () => {
    // `The company raised €310 million … led by Fjordline Capital` holds neither "invested" nor
    // "Veldra": "not covered", and in the delay's room its chief supplier's chief executive.
    for (const room of ['news_n01', 'topic_tech', 'news_n12']) {
      expect((await ask(room, 'Who invested in Veldra?')).answer).toMatch(
        /^The company raised €310 million in a Series C round in November 2025, led by Fjordline Capital/,
      );
    }
  });
});

describe('a question of what something costs', () => {
  it('is led by a sentence holding the price, not by one holding the question’s words and no amount', async () => {
    // A comment's "anyone comparing it with a bus lane cost …" and a video's chapter "11:50
    // Opposition questions on cost" led; in the politics room the question was "not covered".
    for (const [room, question] of [
      ['news_n11', 'How much does the tram cost?'],
      ['topic_politics', 'How much does the tram cost?'],
      ['news_n13', 'How much does the Harbour Line cost?'],
      ['topic_politics', 'How much does the Harbour Line cost?'],
    ]) {
      expect((await ask(room, question)).answer).toMatch(/^[^[]*€1\.42 billion/);
    }
  });
});

/** Asks as `ask` does, but the answer may be that the sources do not hold it. */
async function askAllowingNone(roomId: string, text: string): Promise<string> {
  const thread = await threadWith(roomId, []);
  const res = await app.inject({ method: 'POST', url: `/api/v1/rooms/${roomId}/ask`, payload: { text, threadId: thread } });
  expect(res.statusCode).toBe(200);
  return res.json().answer;
}

describe('a question of who did something whose best sentence names nobody', () => {
  it('is answered with the sentence naming who did it, where one near it does', async () => {
    // `By Thursday evening, 41 of the 63 people outside the company … TesseraDB` named a day; the
    // lead naming the company came third.
    for (const room of ['news_n03', 'topic_tech']) {
      expect((await ask(room, 'Who makes TesseraDB?')).answer).toMatch(/^Tessera Data, the company behind the distributed SQL database TesseraDB/);
    }
  });

  it('reads a post’s heading as a sentence of its own, not as a name run into the next line', async () => {
    // `Three more things the postmortem gets right Failure detectors must not share fate …` was
    // quoted: a heading and the paragraph after it were one sentence, and "Failure" a name.
    const { answer } = await ask('post_p01', 'Who wrote the post-mortem?');
    expect(answer).toMatch(/^Last week Nimbic Cloud published one of the better postmortems/);
    expect(answer).not.toContain('Three more things');
  });

  it('says plainly that the sources do not say who, where no sentence near the best names anyone', async () => {
    // The Science room has no Veldra item; a Business post's `The overrun, €74 million on a €1.16
    // billion factory, is painful for Veldra's cash …` was quoted.
    expect(await askAllowingNone('topic_science', 'Who runs Veldra?')).toBe(NOT_COVERED);
  });
});

describe('a question of who makes something, asked with a light verb', () => {
  it('is answered with the sentence naming its maker by the noun, not one where its maker only speaks', async () => {
    // `The K1 ships with Kestrel OS, a Debian-based distribution …; Pellervo said …` led: it names
    // products and a speaker, not who makes the laptop; the video's room quoted its first line.
    for (const room of ['news_n04', 'video_v02']) {
      expect((await ask(room, 'Who makes the Kestrel K1?')).answer).toMatch(/^Aino Pellervo, founder of the Vessbridge laptop maker Kestrel Systems/);
    }
  });
});

describe('a question of what something costs that no source prices', () => {
  it('says plainly that the sources do not hold the price, not another thing’s', async () => {
    // `a replacement battery costs €69` for the K2, the K1's `€899` for the A9 chip, `The first
    // MosaicDB release … is planned for July`.
    for (const [room, question] of [
      ['news_n04', 'How much does the Kestrel K2 cost?'],
      ['news_n04', 'How much does the Ardent A9 cost?'],
      ['news_n04', 'How much does the A8 chip cost?'],
      ['news_n03', 'How much does MosaicDB cost?'],
    ]) {
      expect(await askAllowingNone(room, question)).toBe(NOT_COVERED);
    }
  });

  it('still answers with the price of the model it names', async () => {
    expect((await ask('news_n04', 'How much does the Kestrel K1 cost?')).answer).toMatch(/(?:^|\] )The K1 costs €899/);
  });
});

describe('a question naming a compound of a combining form (a gigafactory)', () => {
  it('is answered by a source naming it that calls it by its head (the factory)', async () => {
    // The delay's `It raised its estimate of the factory's total cost by €74 million to €1.16
    // billion` held "cost" and no "gigafactory": "not covered", in the item's room and the topic's.
    for (const room of ['news_n12', 'topic_business']) {
      expect((await ask(room, 'How much does the gigafactory cost?')).answer).toMatch(/^[^[]*the factory's total cost by €74 million to €1\.16 billion/);
    }
  });
});

describe('a question about the room’s own item', () => {
  it('is answered from its byline and dateline, which its text does not say', async () => {
    // "Who is the author?" was answered `Each shortlisted author receives €2,500.`, "Who wrote this
    // article?" was "not covered", and "When was this published?" quoted the novel's `published in March`.
    for (const question of ['Who wrote this article?', 'Who is the author?']) {
      expect((await ask('news_n20', question)).answer).toBe('This article is by Linnea Hartwell, published by Arts \\& Letters Review on 29 Oct 2026. [1]');
    }
    expect((await ask('news_n20', 'When was this published?')).answer).toMatch(/^This article was published on 29 Oct 2026/);
    const video = await ask('video_v01', 'What channel is this from?');
    expect(video.answer).toMatch(/^This video is from the Ops Hour channel/);
    expect(video.sources.map((s) => s.id)).toEqual(['video_v01']);
  });

  it('is not taken for a question about what the item is about', async () => {
    expect(await askAllowingNone('news_n20', 'Who wrote The Salt Archive?')).not.toMatch(/Linnea Hartwell/);
  });

  it('keeps the details from the room’s description clients are sent', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/v1/rooms/news_n20' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).not.toHaveProperty('details');
    const { client, welcome } = await joined(app, 'Ann', 'news_n20');
    expect(welcome.room.id).toBe('news_n20');
    expect(welcome.room).not.toHaveProperty('details');
    client.close();
    expect(await app.salon.rooms.resolve('news_n20')).toMatchObject({ details: { kind: 'article', author: 'Linnea Hartwell' } });
  });
});

describe('a question of when a rule takes effect', () => {
  it('is answered by the sentence telling from when it applies', async () => {
    // `The law applies to … from 1 January 2027` holds neither "take" nor "effect": "not covered".
    for (const question of ['When does it take effect?', 'When will the law come into force?']) {
      expect((await ask('news_n14', question)).answer).toMatch(
        /^The law applies to smartphones, tablets, laptops and desktop computers sold in Lowmark from 1 January 2027\./,
      );
    }
  });
});

describe('a question of who brought a legal action', () => {
  it('is answered by the sentence naming the action in its own word', async () => {
    // `dismissed a legal challenge by shopkeepers` holds no "case" nor "brought": the ask abstained.
    for (const question of ['Who brought the case?', 'Who filed the lawsuit?']) {
      expect((await ask('news_n13', question)).answer).toMatch(
        /^The Lowmark Administrative Court on Tuesday dismissed a legal challenge by shopkeepers on Quay Street/,
      );
    }
  });
});

describe('an overview of an item’s room', () => {
  it('leads with the item’s own summary, not the central sentences of a passage picked for the question', async () => {
    // It began `The results were published on Tuesday by the Nordic Battery Test Centre …`.
    expect((await ask('news_n01', 'What is this about?')).answer).toMatch(
      /^The Skarvik start-up's VS-2 prismatic cell kept 80% of its capacity after 4,100 cycles at the Nordic Battery Test Centre, putting sodium-ion within reach of entry-level electric cars\. /,
    );
    expect((await ask('news_n21', 'What is this about?')).answer).toMatch(
      /^71% of 302 eligible staff at the Vessbridge game studio voted to join Game Workers Lowmark\. /,
    );
  });
});

describe('a question naming a title by its abbreviation', () => {
  it('is answered by the sentence writing the title out', async () => {
    // `said Ingrid Aasvold, Veldra's chief executive` holds no "CEO": "not covered".
    expect((await ask('news_n01', 'Who is the CEO of Veldra?')).answer).toMatch(/^[^[]*said Ingrid Aasvold, Veldra's chief executive/);
    expect((await ask('news_n03', "Who is Tessera's CEO?")).answer).toMatch(/^Tessera Data's chief executive, Rafael Quintero-Bly, said/);
  });
});

describe('a question whose words a post’s heading holds', () => {
  it('is not answered with the heading', async () => {
    // `## Why 26 minutes matters`, squashed into the passage as a sentence ending its line, led.
    const answer = (await ask('video_v03', 'Why does 26 minutes matter?')).answer;
    expect(answer).not.toMatch(/Why 26 minutes matters/);
    expect((await ask('topic_business', 'What happened to Tollgate?')).answer).not.toMatch(/What Tollgate customers should have asked/);
  });
});

describe('a question naming the room’s item by its noun', () => {
  it('asks the item about what follows, neither searching for the noun nor quoting a "says"', async () => {
    // "article" weighed as much as "keyboard": the ask abstained; without it, `says` made `The company
    // says it has taken about 18,000 preorders` the answer.
    for (const question of ['What does the article say about the keyboard?', 'What does it say about the keyboard?', 'What is said about the keyboard?']) {
      expect((await ask('news_n04', question)).answer, question).toMatch(/^[^[]*the keyboard can be replaced without removing the mainboard/);
    }
    expect((await ask('news_n07', 'What does this article say about binoculars?')).answer).toMatch(/^[^[]*binoculars/);
  });
});

describe('a question of who the item quotes', () => {
  it('lists the people the whole item gives words to, a surname quoted alone under its full name', async () => {
    // "Who is quoted in the article?" abstained; "Who is quoted?" quoted `Kestrel quotes 11 hours of …`.
    expect((await ask('news_n04', 'Who is quoted in the article?')).answer).toBe("The article quotes Aino Pellervo, Kestrel's founder [1].");
    expect((await ask('news_n11', 'Who is quoted?')).answer).toBe(
      'The article quotes Selma Achterberg, the deputy mayor responsible for transport [1] and Pieter Vandamme-Ross [1].',
    );
    // `"I thought it was a smudge …," Lund said.`: his full name is in a sentence quoting no one.
    expect((await ask('news_n07', 'Who does the article quote?')).answer).toMatch(/^The article quotes Nils Lund \[1\] and Dr\. Amara Kessling-Oduya, /);
  });
});

describe('a question of an item’s main argument', () => {
  it('is answered with the overview, as "the main point" is', async () => {
    // It abstained ("argument" in no sentence), and before "this post" was the item's, quoted another item's `central change`.
    expect((await ask('post_p05', 'What is the main argument of this post?')).answer).toMatch(/^Meridian USD's reserve reports said almost everything/);
  });
});

describe('a "how deep" question of one thing', () => {
  it('is about the room’s item where one of its sentences holds the thing and a number', async () => {
    // `41 dives at 2,300 to 3,100 metres` holds no "deep": the video's own room abstained.
    expect((await ask('video_v04', 'How deep were the dives?')).answer).toMatch(/^[^[]*41 dives at 2,300 to 3,100 metres/);
    expect((await ask('news_n07', 'How big is the nucleus?')).answer).toMatch(/^The nucleus is estimated to be between 3 and 5 kilometres across\./);
  });
});

describe('a question of an interview’s guest', () => {
  it('names the guest the video’s description says joins it', async () => {
    expect((await ask('video_v12', 'Who is the guest?')).answer).toBe('The video features Tove Marangoni [1].');
  });
});

describe('a question of which thing the room discusses', () => {
  it('asks for the thing, not for a sentence saying "discussion"', async () => {
    // `Further reading: … the excellent discussion of it on the Ops Hour channel.` was the answer.
    expect((await ask('topic_tech', 'Which laptop is discussed here?')).answer).toMatch(
      /Kestrel Systems, a hardware start-up from Vessbridge, began shipping its K1 laptop/,
    );
  });
});

describe('a question of what the item’s maker thinks', () => {
  it('asks the item what it says, neither searching for "author" nor abstaining for want of "think"', async () => {
    // Each abstained ("I could not find this…") in a post arguing about crunch in every paragraph.
    for (const question of [
      'What does the author think about crunch?',
      "What is the author's view on crunch?",
      'Does the author think crunch can be avoided?',
    ]) {
      expect((await ask('post_p12', question)).answer, question).toMatch(/^[^[]*Crunch (?:rarely arrives as an order|is a planning failure)/);
    }
    expect((await ask('post_p06', 'Does the author support the tram?')).answer).toMatch(/^I have campaigned for a tram to the Harbour district/);
    // "Would … recommend it?" was "not answered": the item itself is what it asks of.
    expect((await ask('post_p02', 'Would the author recommend it?')).answer).toMatch(/slow in places and delightful in others/);
    expect((await ask('post_p12', 'Is crunch inevitable according to the author?')).answer).toMatch(/^[^[]*crunch/i);
    // Asked as a whole, the post's argument: the lead, not `Vessbridge will want a second tram line one day`.
    expect((await ask('post_p06', 'What does the author want?')).answer).toMatch(/^An urbanist who campaigned for the tram argues/);
  });
});

describe('a question answered by a list entry with a label', () => {
  it('quotes the entry’s sentence with its label, not the label alone', async () => {
    // `2. **Cold.** VS-2 kept 91% …` in the sodium-ion post: the answer was `Cold. [1]`.
    const answer = (await ask('post_p08', 'How does it do in the cold?')).answer;
    expect(answer).toMatch(/(?:^|\] )Cold\. VS-2 kept 91% of its capacity at -20 °C, versus roughly 70% for the LFP reference\. \[1\]/);
    expect(answer).not.toMatch(/Cold\. \[1\]/);
  });
});

describe('a question of how one thing compares with another', () => {
  it('is answered by what is said of the other thing, not by every "compared with"', async () => {
    // `compared with 2.4 per cent on placebo` answered "how does it compare with injections?".
    const answer = (await ask('news_n17', 'How does it compare with injections?')).answer;
    expect(answer).toMatch(/^[^[]*injections/);
    expect(answer).not.toMatch(/placebo/);
  });
});

describe('a "who" question asking a deed', () => {
  it('is answered by the one its doer’s noun names', async () => {
    // `its developer, Calder Therapeutics` holds no "developed": "The sources I found do not answer this question."
    expect((await ask('news_n17', 'Who developed it?')).answer).toMatch(/^[^[]*its developer, Calder Therapeutics/);
  });
});

describe('a question of what went wrong or what is new', () => {
  it('is asked of the room as a whole, or of the thing it names, not answered by another item’s "go wrong"', async () => {
    // Each was answered from the tram post's `They go wrong on the street.`; "what's new in tech?" abstained.
    expect((await ask('video_v01', 'What went wrong?')).answer).toMatch(/^On 6 March a config migration renamed/);
    expect((await ask('news_n02', 'What went wrong with the migration?')).answer).toMatch(/^The new schema renamed the field to max\\_rpm/);
    expect((await ask('topic_tech', "What's new in tech?")).answer).toMatch(/^Recent in Tech\b/);
    // Of one thing the room's digest lists a title of: that thing's news, not the room's list.
    const comet = (await ask('topic_science', "What's the latest on the comet?")).answer;
    expect(comet).not.toMatch(/^Recent in Science/);
    expect(comet).toMatch(/the comet should be best placed in the evening sky/);
  });
});

describe('a question of how something went', () => {
  it('is about the room’s item when the item tells it, with no "go" in its sentence', async () => {
    // `The motion passed by 31 votes to 18` holds no "go": "I could not find this …".
    expect((await ask('news_n11', 'How did the vote go?')).answer).toMatch(/^The motion passed by 31 votes to 18/);
    expect((await ask('news_n21', 'How did the ballot go?')).answer).toMatch(/^In a ballot that closed on Tuesday, 214 of the 302 eligible employees/);
  });
});

describe('a side asked of the room’s subject', () => {
  it('is taken on what the room is about when the question names nothing', async () => {
    // In the tram vote video's room, the repair act's `The Lowmark Liberals voted against.` came first.
    const answer = (await ask('video_v07', 'Who voted against?')).answer;
    expect(answer).toMatch(/^The Lowmark Liberals and the Citizens' Alliance voted against, arguing that the cost had grown too fast/);
    expect(answer).not.toContain('The Lowmark Liberals voted against.');
    expect((await ask('news_n14', 'Who voted against?')).answer).toMatch(/^The Lowmark Liberals voted against\. \[1\]/);
  });
});

describe('"what is the main lesson?"', () => {
  it('asks for the story as a whole, not for a sentence saying "lesson"', async () => {
    // `I think that is the wrong lesson.` answered it.
    const answer = (await ask('post_p01', 'What is the main lesson?')).answer;
    expect(answer).not.toContain('wrong lesson');
    expect(answer).toMatch(/making the unit part of the type/);
  });
});

describe('a question of whether what the room item’s title names is so', () => {
  it('is answered by the item’s sentence holding the rest of it', async () => {
    // "Is the K1 fast?" abstained: `Early reviews suggest it is not yet fast.` names no K1.
    expect((await ask('news_n04', 'Is the K1 fast?')).answer).toMatch(/^Early reviews suggest it is not yet fast\. \[1\]/);
    expect(await askAllowingNone('news_n04', 'Is the K1 waterproof?')).toBe(ABSTAIN_TEXT);
  });
});

describe('a question asking no kind of answer', () => {
  it('is answered from the lead sentence holding all it asks, not from a passage naming some of it more often', async () => {
    // `Aurelian currently operates 84 ships …` answered it: the lead was not in the passage.
    expect((await ask('news_n16', 'What did Aurelian order?')).answer).toMatch(/^Aurelian Lines, [^[]*has ordered 12 container ships/);
  });
});

describe('a question of how a thing works or what people think of it', () => {
  it('is answered from the room’s item, not from any source saying "work" or "think"', async () => {
    const works = await ask('news_n18', 'How does the triage AI work?');
    expect(works.answer).toMatch(/triage software that uses artificial intelligence/);
    // `I think that is the wrong lesson.` (the outage post) answered the nurses' question.
    const nurses = await ask('news_n18', 'What do nurses think?');
    expect(nurses.answer).not.toContain('wrong lesson');
    expect(nurses.answer).toMatch(/[Nn]urse/);
    expect(nurses.sources.every((s) => s.id.startsWith('news_n18'))).toBe(true);
  });

  it('reads "what is being done about it?" as the story’s news, not as any sentence saying "done"', async () => {
    // In the outbreak's room it was "not answered"; in the Science room a tram post's `Cities that have done this well` answered it.
    expect((await ask('news_n19', 'What is being done about it?')).answer).toMatch(/would extend emergency vaccination clinics at schools/);
    const science = (await ask('topic_science', 'What is being done about the measles outbreak?')).answer;
    expect(science).toMatch(/^A measles outbreak in Port Avelin [^[]*would extend emergency vaccination clinics/);
    expect(science).not.toContain('done this well');
  });

  it('reads a source’s risks for the downsides asked', async () => {
    expect((await ask('post_p08', 'What are the downsides?')).answer).toMatch(/^The real risks are elsewhere/);
  });

  it('reads a source’s "safety" for "safe"', async () => {
    // "Is it safe?" was "not answered" beside `an actual safety improvement`.
    expect((await ask('news_n18', 'Is it safe?')).answer).toMatch(/actual safety improvement/);
  });
});

describe('a question of why the story matters', () => {
  it('is answered with the story as a whole, not a commenter’s "important"', async () => {
    // `Important caveat for everyone about to post 'fusion is here' …` answered "why is this important?".
    const answer = (await ask('news_n05', 'Why is this important?')).answer;
    expect(answer).toMatch(/^The Lindholm Institute's fusion experiment kept a hydrogen plasma running for 26 minutes/);
    expect((await ask('video_v03', 'Why does it matter?')).answer).toMatch(/^The Orrery-2 stellarator in Kaldmere just ran a hydrogen plasma/);
  });
});

describe('a question of a video’s chapters', () => {
  it('is answered from the room’s video’s chapter lines, not from other items’ words', async () => {
    // "What are the chapters?" quoted a novelist's `Includes a reading from chapter nine.`
    expect((await ask('video_v09', 'What are the chapters?')).answer).toBe(
      "The video's chapters: 0:00 The headline number; 1:30 Who was in the trial; 3:10 Side effects; 5:00 Why weekly matters; 6:40 What we still don't know. [1]",
    );
    expect((await ask('video_v09', 'What is discussed at 3:00?')).answer).toBe('At 3:00 the video is in its chapter “Who was in the trial” (1:30–3:10). [1]');
    // A chapter's title holding a time: `05:20 Sunday: the low at 03:00 UTC`.
    expect((await ask('video_v05', 'When do they talk about the reserve report?')).answer).toBe(
      'The chapter “The reserve report footnotes” starts at 10:05. [1]',
    );
    expect((await ask('video_v09', 'How long is the video?')).answer).toMatch(/^This video's page does not give its length; its last chapter/);
    // A video whose description lists none: the outage items' `six hours and twelve minutes` answered.
    expect((await ask('video_v06', 'What happens at 12 minutes?')).answer).toBe(
      "This video's description lists no chapters, so I cannot tell what comes at 12:00.",
    );
  });
});

describe('a question answered by a row of a post’s table', () => {
  it('quotes the row as a sentence of its own, not the whole table', async () => {
    // `Metric (6 months) 2024–25 2025–26 (pilot) Change Revenue €2.31m …` was one sentence; each
    // cell now follows its column's heading.
    expect((await ask('post_p09', 'What happened to overtime?')).answer).toMatch(
      /^Overtime hours — 2024–25: 1,880 — 2025–26 \(pilot\): 740 — Change: −61%\. \[1\]/,
    );
    // A row starting in lower case (`by 8 January 2027`) ran on from the row before it.
    const list = (await ask('post_p07', 'When does the ministry publish the list?')).answer;
    expect(list).toContain('By 8 January 2027 — What happens: Ministry publishes list of "commonly available tools". [1]');
    expect(list).not.toContain('Act passed');
    expect((await ask('post_p07', 'What are the penalties?')).answer).toMatch(/impose fines of up to 4% of annual Lowmark turnover/);
  });
});

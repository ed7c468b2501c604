/** The built-in model's answers: what it quotes after the answer sentence, and from which source. */
import { describe, expect, it } from 'vitest';
import type { GroundedSource } from '../../src/ai/grounded-prompt.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { LocalEmbedder } from '../../src/ai/local/local-embedder.js';
import { addsToAnswer } from '../../src/ai/local/follow-up.js';
import { namedSubjectFirst } from '../../src/ai/local/subject-named.js';
import { ask } from './local-chat-fixtures.js';

const models = [
  ['without an embedder', new LocalChatModel()],
  ['with the local embedder', new LocalChatModel(new LocalEmbedder())],
] as const;

describe.each(models)('a sentence after the answer (%s)', (_name, model) => {
  it('is not quoted when it says nothing more of what is asked', async () => {
    // `The average household size was 3.07.` followed the family size: no word of it is asked.
    const census: GroundedSource = {
      n: 1,
      label: 'Fresno census',
      content:
        'As of the census of 2010, there were 494,665 people living in the city. ' +
        'There were 111,529 families (70.4% of all households); the average family size was 3.62. ' +
        'The average household size was 3.07. The racial makeup of the city was mixed.',
    };
    expect(await model.answer(ask('What was the average family size?', [census]))).toBe(
      'There were 111,529 families (70.4% of all households); the average family size was 3.62. [1]',
    );
  });

  it('is not a remembered thank-you that holds only the names asked', async () => {
    // `Caroline: That charity race sounds great, Mel!` followed the race itself.
    const memory: GroundedSource = {
      n: 2,
      label: 'Earlier',
      section: 'memory',
      content:
        'Melanie (25 May 2023, 13:56): I ran a charity race for mental health last Saturday – it was really rewarding.\n' +
        'Caroline (25 May 2023, 13:57): That charity race sounds great, Mel!\n' +
        'Melanie (25 May 2023, 13:58): Thanks, Caroline!',
    };
    const room: GroundedSource = { n: 1, label: 'Caroline and Melanie', roomItem: true, content: 'A conversation between Caroline and Melanie.' };
    const answer = await model.answer(ask('When did Melanie run a charity race?', [room, memory]));
    expect(answer).toMatch(/^Melanie: I ran a charity race for mental health last Saturday \(Saturday 20 May 2023\)/);
    expect(answer).not.toMatch(/sounds great|Thanks/);
  });

  it('bearing out a reason says something: `Certainly!` bears nothing out', async () => {
    const crisis: GroundedSource = {
      n: 1,
      label: 'The 1973 oil crisis',
      content:
        'The embargo began in October 1973. Weeks later, the Shah of Iran said in an interview: "Of course the price of oil is going to rise... Certainly! And how!" Prices rose fourfold.',
    };
    const answer = await model.answer(ask('Why did the Shah of Iran give an interview?', [crisis]));
    expect(answer).toMatch(/^Weeks later, the Shah of Iran said in an interview/);
    expect(answer).not.toContain('Certainly');
  });
});

describe('addsToAnswer', () => {
  const q = 'What did Melanie paint recently?';
  it('takes a sentence holding a word of the question the answer lacks, or one saying enough of its own', () => {
    expect(addsToAnswer(q, ['Melanie: Here is my horse painting.'], 'Melanie: I painted a sunset recently.')).toBe(true);
    expect(addsToAnswer(q, ['Melanie: I painted a horse recently.'], 'Melanie: The lake sunrise I painted hangs in the kitchen now.')).toBe(true);
    // An earlier ask leading the answer holds the words it asks, not their answer.
    expect(addsToAnswer(q, ['Ann: @ai what did Melanie paint recently?'], 'Melanie painted a sunset.')).toBe(true);
  });

  it('refuses one holding no word of the question, or only the answer’s and little of its own', () => {
    expect(addsToAnswer(q, ['Melanie: I painted a horse recently.'], 'Certainly!')).toBe(false);
    expect(addsToAnswer(q, ['Melanie: I painted a horse recently.'], 'Thanks, Melanie!')).toBe(false);
  });
});

describe.each(models)('the answer’s first sentence (%s)', (_name, model) => {
  const paris: GroundedSource = {
    n: 1,
    label: 'Black Death in Europe',
    content: 'In 1466, perhaps 40,000 people died of the plague in Paris. The epidemic returned every few years.',
  };

  it('comes from a source naming what the question names, not from one that never does', async () => {
    const baghdad: GroundedSource = {
      n: 2,
      label: 'Plague in the Middle East',
      content:
        'The plague reached the Middle East in 1347. Baghdad has suffered severely from visitations of the plague, and sometimes two-thirds of its population has been wiped out.',
    };
    expect(await model.answer(ask('How many people, at most, have died of plague in Baghdad?', [paris, baghdad]))).toMatch(/^Baghdad has suffered severely/);
  });

  it('stays with a source writing out the abbreviation the question names', async () => {
    // "EU": `the European Union` names it; the other source's `EU institutions` answers nothing.
    const rights: GroundedSource = {
      n: 1,
      label: 'European Union law',
      content: 'None of the original treaties establishing the European Union mention protection for fundamental rights.',
    };
    const amended: GroundedSource = {
      n: 2,
      label: 'Treaties',
      content: 'Major amending treaties were signed to make minor amendments to the relative power of member states in the EU institutions.',
    };
    expect(await model.answer(ask('How many original treaties establishing the EU protected fundamental rights?', [rights, amended]))).toMatch(
      /^None of the original treaties establishing the European Union/,
    );
  });
});

describe('namedSubjectFirst', () => {
  const ranked = [
    { n: 1, text: 'In 1466, perhaps 40,000 people died of the plague in Paris.' },
    { n: 2, text: 'The agency was founded in 1958.' },
  ];
  const sources = (content: string): GroundedSource[] => [
    { n: 1, label: 'Black Death', content: ranked[0].text },
    { n: 2, label: 'Agencies', content },
  ];
  it('reads an abbreviation as spelt by capitalised words in a row, `of` or `and` between them', () => {
    const q = 'When was NASA founded?';
    const lead = (content: string) => namedSubjectFirst(q, sources(content), ranked, () => true)[0].n;
    expect(lead('The National Aeronautics and Space Administration was founded in 1958.')).toBe(2);
    expect(lead('The National Aeronautics. Space Administration was founded in 1958.')).toBe(1);
  });

  it('reads megabytes of capitalised words in a row without the regex engine’s backtrack stack', () => {
    const q = 'When was NASA founded?';
    expect(namedSubjectFirst(q, sources('Aa '.repeat(2_000_000)), ranked, () => true)[0].n).toBe(1);
  });
});

describe.each(models)('an answer opening with a pronoun (%s)', (_name, model) => {
  it('is read with the sentence before it that names whom the pronoun stands for', async () => {
    // `He is also the oldest quarterback …` was the whole answer, saying nowhere who.
    const quarterbacks: GroundedSource = {
      n: 1,
      label: 'Super Bowl 50 quarterbacks',
      content:
        'Peyton Manning became the first quarterback ever to lead two different teams to multiple Super Bowls. ' +
        'He is also the oldest quarterback ever to play in a Super Bowl at age 39. The past record was held by John Elway.',
    };
    expect(await model.answer(ask('How old was the oldest quarterback to play in a Super Bowl?', [quarterbacks]))).toBe(
      'Peyton Manning became the first quarterback ever to lead two different teams to multiple Super Bowls. [1] ' +
        'He is also the oldest quarterback ever to play in a Super Bowl at age 39. [1]',
    );
    expect(await model.answer(ask("What happened to Tesla's work after his death?"))).toBe(
      'Tesla died on 7 January 1943 in New York City. [2] His work fell into obscurity after his death. [2]',
    );
  });
});

describe('a question asking two things', () => {
  // Search ordered the sources for the whole question, and a source's place weighs on its
  // sentences: "when did Tesla die?" was answered from the source listed second, about Edison.
  const sources: GroundedSource[] = [
    { n: 1, label: 'Super Bowl 50', content: "Super Bowl 50 was played at Levi's Stadium in Santa Clara, California." },
    { n: 3, label: 'Rivals', content: "Tesla's rival Thomas Edison died in 1931." },
    { n: 4, label: "Levi's Stadium", content: "Levi's Stadium opened in 2014. It seats 68,500 fans." },
    { n: 5, label: 'Football', content: 'American football is played by two teams of eleven.' },
    { n: 2, label: 'Inventors', content: 'Tesla died on 7 January 1943 in New York City.' },
  ];
  const question = 'Where was Super Bowl 50 played, and when did Tesla die?';

  it('answers each part from the sources in the order of that part’s own words', async () => {
    const model = new LocalChatModel(new LocalEmbedder(), { maxSentences: 1 });
    expect(await model.answer(ask(question, sources))).toBe(
      "Super Bowl 50 was played at Levi's Stadium in Santa Clara, California. [1] Tesla died on 7 January 1943 in New York City. [2]",
    );
  });

  it('quotes a part’s own source first without an embedder too', async () => {
    const answer = await new LocalChatModel().answer(ask(question, sources));
    expect(answer.indexOf('Tesla died on 7 January 1943')).toBeGreaterThan(0);
    expect(answer.indexOf('Tesla died on 7 January 1943')).toBeLessThan(answer.indexOf('Thomas Edison died'));
  });
});

describe.each(models)('a question with courtesies around it (%s)', (_name, model) => {
  it('is answered as it is without them', async () => {
    // "quick question:" and "thanks" are words no source holds: they took the answer under the
    // relevance bar, and the sources were said not to answer.
    const pilot: GroundedSource = {
      n: 1,
      label: 'AI triage pilot cuts emergency waits by 22 minutes in Vessbridge',
      roomItem: true,
      content:
        'Patients arriving at the emergency departments of two Vessbridge hospitals were assessed by a nurse a median of 22 minutes sooner during a nine-month pilot of triage software that uses artificial intelligence. ' +
        'The pilot ran from January to September at Vessbridge General Hospital and Harbourside Hospital, and covered about 184,000 emergency presentations. ' +
        'Patients used a tablet at reception to answer questions about their symptoms.',
    };
    const plain = await model.answer(ask('how many emergency visits were there?', [pilot]));
    expect(plain).toMatch(/184,000 emergency presentations/);
    for (const said of ['quick question: how many emergency visits were there?', 'Hey AI, how many emergency visits were there? thanks']) {
      expect(await model.answer(ask(said, [pilot]))).toBe(plain);
    }
  });
});

describe('a document’s heading', () => {
  const model = new LocalChatModel();
  const post: GroundedSource = {
    n: 1,
    label: 'Why stellarators are back',
    content:
      'Its predecessors lost years to coils that were slightly wrong. Why 26 minutes matters\n\nA power plant has to run for months, and 26 minutes of steady heat shows the divertor can. ' +
      'That is a measurement no short shot can give you.',
  };

  it('is not quoted as an answer, though it holds the question’s words', async () => {
    const answer = await model.answer(ask('Why do 26 minutes matter?', [post]));
    expect(answer).not.toMatch(/Why 26 minutes matters/);
    expect(answer).toMatch(/^A power plant has to run for months/);
  });

  it('is told from a list’s entry or a field, which answers as written', async () => {
    const review: GroundedSource = {
      n: 1,
      label: 'Lumen 14 review',
      content:
        'We tested the Lumen 14 for two weeks. It is light and quiet.\n\nKey facts\n- Weight: 1.2 kg\n- Battery life: 14 hours\n- Price: 1,299 euros\n\nThe screen is bright.',
    };
    expect(await model.answer(ask('What is the battery life?', [review]))).toBe('- Battery life: 14 hours [1]');
    expect(await model.answer(ask('What is the price?', [review]))).toBe('- Price: 1,299 euros [1]');
  });

  it('is told from a short sentence that ends with a stop or does not end its line', async () => {
    const short: GroundedSource = { n: 1, label: 'Minutes', content: 'Why 26 minutes matters. A power plant runs for months.' };
    expect(await model.answer(ask('Why do 26 minutes matter?', [short]))).toMatch(/^Why 26 minutes matters\./);
  });
});

describe('an answer begun from what people said', () => {
  const model = new LocalChatModel();
  const game: GroundedSource = {
    n: 1,
    label: 'Studio workers vote to unionise',
    content: 'For about five months before the game shipped, most of the development team worked more than 60 hours a week.',
  };
  const chat: GroundedSource = {
    n: 2,
    label: 'From this discussion — Jonas, 4 Dec 2026',
    content:
      'Jonas (4 Dec 2026, 23:10): I used to work on container ships, methanol is tricky to store\nJonas (4 Dec 2026, 23:11): My brother is a chief engineer',
    section: 'recent',
  };

  it('goes on from the discussion, not from another article sharing its words, and ends each quote with a stop', async () => {
    // It went on `For about five months before Ember Tide shipped …` with no stop between, and,
    // read back from the chat without its [n], the two quotes were one.
    expect(await model.answer(ask('Who worked on container ships?', [game, chat]))).toBe(
      'Jonas: I used to work on container ships, methanol is tricky to store. [2]',
    );
  });
});

describe('an overview of the discussion', () => {
  const model = new LocalChatModel();
  const doc: GroundedSource = { n: 1, label: 'Orvaglutide trial', content: 'Participants lost 13.2 per cent of their weight over 72 weeks.' };
  const chat: GroundedSource = {
    n: 2,
    label: 'From this discussion — Priya, Tom, 4 Dec 2026',
    section: 'recent',
    content: [
      'Priya (4 Dec 2026, 23:10): I started on semaglutide in March and lost 9 kg so far',
      'Priya (4 Dec 2026, 23:11): The nausea was bad for the first two weeks',
      'Tom (4 Dec 2026, 23:12): @ai How much weight did Priya lose so far?',
      'Salon AI (4 Dec 2026, 23:12): Priya: I started on semaglutide in March and lost 9 kg so far.',
      'Tom (4 Dec 2026, 23:13): @ai When did Priya start on semaglutide?',
      'Salon AI (4 Dec 2026, 23:13): Priya: I started on semaglutide in March and lost 9 kg so far.',
      'Tom (4 Dec 2026, 23:14): I wonder if the pill will be covered by insurance',
    ].join('\n'),
  };

  it('quotes what people said, not the assistant’s answers quoting it again nor the asks before them', async () => {
    expect(await model.answer(ask('What did we discuss so far?', [doc, chat]))).toBe(
      'So far in this discussion: Priya: I started on semaglutide in March and lost 9 kg so far. [2] Priya: The nausea was bad for the first two weeks. [2] ' +
        'Tom: I wonder if the pill will be covered by insurance. [2]',
    );
  });
});

describe('a question in other words than its source’s', () => {
  const model = new LocalChatModel();
  it('finds a sentence saying its words’ kin (kids are children, to start is to begin)', async () => {
    const schools: GroundedSource = {
      n: 1,
      label: 'Schools in Port Avelin',
      content: 'The start of the school year was delayed until October 2024 by a strike. The children began school in September 2025, a year late.',
    };
    expect(await model.answer(ask('When did the kids start school?', [schools]))).toMatch(/^The children began school in September 2025, a year late\. \[1\]/);
  });
});

describe('a remembered line setting the scene of what is asked', () => {
  const model = new LocalChatModel();
  const past: GroundedSource = {
    n: 1,
    label: 'From this discussion — Caroline, Melanie, 14 Jul 2023',
    section: 'memory',
    content: [
      'Caroline (14 Jul 2023, 10:02): Last Friday I went to a council meeting for adoption.',
      'Caroline (14 Jul 2023, 10:03): It was inspiring to see so many people wanting to create loving homes for children in need.',
      'Melanie (14 Jul 2023, 10:04): My kids are so excited about summer break!',
      'Melanie (14 Jul 2023, 10:05): We are going camping at the beach for the summer.',
    ].join('\n'),
  };

  it('is read with what its speaker said next, which tells what was asked', async () => {
    // `Last Friday I went to a council meeting for adoption.` holds every word asked and tells
    // nothing seen; the next line does.
    expect(await model.answer(ask('What did Caroline see at the council meeting for adoption?', [past]))).toBe(
      'Caroline: Last Friday (Friday 7 July 2023) I went to a council meeting for adoption. [1] ' +
        'Caroline: It was inspiring to see so many people wanting to create loving homes for children in need. [1]',
    );
  });

  it('is not, where it answers itself (when) or the next line is another speaker’s', async () => {
    expect(await model.answer(ask('When did Caroline go to the council meeting?', [past]))).toBe(
      'Caroline: Last Friday (Friday 7 July 2023) I went to a council meeting for adoption. [1]',
    );
    expect(await model.answer(ask('What did Melanie say about camping at the beach?', [past]))).not.toMatch(/council/);
  });
});

describe.each(models)('"what does it say about …?" (%s)', (_name, model) => {
  const laptop: GroundedSource = {
    n: 1,
    label: 'Kestrel K1',
    content:
      'The company says it has taken about 18,000 preorders since March. ' +
      'The battery is held by two screws, and the keyboard can be replaced without removing the mainboard. ' +
      'Aino Pellervo said the keyboard was the part she was proudest of.',
  };

  it('asks what the source tells of the thing, not for a sentence saying "says"', async () => {
    const unquoted = { ...laptop, content: laptop.content.replace(/ Aino Pellervo.*$/, '') };
    for (const question of ['What does it say about the keyboard?', 'What is said about the keyboard?', 'What does the source tell about the keyboard?']) {
      expect(await model.answer(ask(question, [unquoted])), question).toMatch(/^The battery is held by two screws, and the keyboard can be replaced/);
    }
  });

  it('still asks a named person for their words', async () => {
    expect(await model.answer(ask('What did Pellervo say about the keyboard?', [laptop]))).toMatch(/^Aino Pellervo said the keyboard/);
  });
});

describe.each(models)('"how many …?" (%s)', (_name, model) => {
  it('is answered by the number counting the thing, not by one counted per the thing', async () => {
    // `12 to 18 people per case` counts people, not cases: it led over `140 confirmed cases`.
    const video: GroundedSource = {
      n: 1,
      label: 'Measles in Port Avelin: how outbreaks start',
      content: 'Using the Port Avelin outbreak as a case study, we explain why measles spreads to 12 to 18 people per case.',
    };
    const article: GroundedSource = {
      n: 2,
      label: 'Port Avelin measles outbreak',
      content: 'A measles outbreak in Port Avelin has grown to 140 confirmed cases since mid-January, health authorities said.',
    };
    expect(await model.answer(ask('How many measles cases are there?', [video, article]))).toMatch(
      /^A measles outbreak in Port Avelin has grown to 140 confirmed cases/,
    );
  });
});

describe.each(models)('a quoted chat line ending in brackets (%s)', (_name, model) => {
  it('gets no second stop after an escaped bracket closing its stop', async () => {
    const recent: GroundedSource = {
      n: 2,
      label: 'From this discussion — Ann, Bo, 28 Nov 2026',
      section: 'recent',
      content: 'Ann (28 Nov 2026, 12:20): The depot moves to Ostkaai [per the minutes.]\nBo (28 Nov 2026, 12:21): I like trams',
    };
    const tram: GroundedSource = { n: 1, label: 'Tram', content: 'The council approved the tram.' };
    expect(await model.answer(ask('Where does the depot move?', [tram, recent]))).toBe('Ann: The depot moves to Ostkaai \\[per the minutes.\\] [2]');
  });
});

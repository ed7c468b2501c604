/** The headline's clause that answers a question of a number or a span (ai/local/headline-measure.ts). */
import { describe, expect, it } from 'vitest';
import { goesOnFromHeadline, headlineMeasure } from '../../src/ai/local/headline-measure.js';

const TRIAGE = 'AI triage pilot cuts emergency waits by 22 minutes in Vessbridge; nurses warn on staffing';
const FEES = "Corvid's 'Lantern' upgrade cuts rollup fees by about 80%; one client misses blocks";
const DELAY = 'Veldra Energy delays Skarvik gigafactory by nine months as cathode supplier falters';

describe('headlineMeasure', () => {
  it('gives the clause holding what is asked beside a number, telling a change when one is asked', () => {
    for (const question of ['How much did waits drop?', 'how much did waits fall', 'How much shorter were the waits?', 'By how much did the pilot cut waits?'])
      expect(headlineMeasure(question, TRIAGE)).toBe('AI triage pilot cuts emergency waits by 22 minutes in Vessbridge');
    expect(headlineMeasure('How much cheaper are fees?', FEES)).toBe("Corvid's 'Lantern' upgrade cuts rollup fees by about 80%");
    expect(headlineMeasure('How much did prices rise?', 'Bread — prices rise 12% in a year')).toBe('prices rise 12% in a year');
    expect(headlineMeasure('How long is the delay?', DELAY)).toBe(DELAY);
    expect(headlineMeasure('How many ships did Aurelian order?', 'Aurelian Lines orders 12 methanol-powered container ships for $1.68 billion')).toBe(
      'Aurelian Lines orders 12 methanol-powered container ships for $1.68 billion',
    );
  });

  it('gives nothing for another kind of question, a thing the clause does not name, a change it does not tell, or no new number', () => {
    expect(headlineMeasure('How long did patients wait?', TRIAGE)).toBeNull();
    expect(headlineMeasure('How much did staffing fall?', TRIAGE)).toBeNull();
    expect(headlineMeasure('What happened to waits?', TRIAGE)).toBeNull();
    expect(headlineMeasure('Why did waits drop?', TRIAGE)).toBeNull();
    expect(headlineMeasure('How many blocks were missed?', FEES)).toBeNull();
    expect(headlineMeasure('How much did the fee fall on Skylark?', FEES)).toBeNull();
    expect(headlineMeasure('How much did waits drop?', 'Triage pilot cuts emergency waits sharply')).toBeNull();
    expect(headlineMeasure('How much did waits rise?', 'Emergency waits of 22 minutes at Vessbridge')).toBeNull();
    // A year is no count nor length.
    expect(headlineMeasure('How long is the film?', "Restored 1924 silent film 'The Lamplighter's Daughter' sells out Vessbridge festival gala")).toBeNull();
    // The clause's only number is the one the question names.
    expect(headlineMeasure('How much did waits drop in 2026?', 'Waits drop in 2026')).toBeNull();
  });
});

describe('headlineMeasure on a hostile title', () => {
  it('reads a title of 300,000 spaces in linear time (the clause break rescanned them from each)', () => {
    expect(headlineMeasure('How much did waits drop?', `waits${' '.repeat(300_000)}cut sharply`)).toBeNull();
    expect(headlineMeasure('How much did waits drop?', `Waits cut by 22 minutes${' '.repeat(300_000)};${' '.repeat(300_000)}more`)).toBe(
      'Waits cut by 22 minutes',
    );
  });
});

describe('goesOnFromHeadline', () => {
  it('takes a sentence holding an asked term and what is asked for, and a verb of change when one is asked', () => {
    expect(goesOnFromHeadline('The median fee fell from $0.042 to $0.007.', 'How much did fees drop?')).toBe(true);
    expect(goesOnFromHeadline('The median fee fell sharply.', 'How much did fees drop?')).toBe(false);
    expect(goesOnFromHeadline('Blob space fell from 40% to 12%.', 'How much did fees drop?')).toBe(false);
    // A comparative alone tells another difference.
    expect(goesOnFromHeadline('Patients who needed help waited 6 minutes longer.', 'How much shorter were the waits?')).toBe(false);
    expect(goesOnFromHeadline('The opening is now expected in the third quarter of 2027, a delay of nine months.', 'How long is the delay?')).toBe(true);
  });
});

describe('goesOnFromHeadline, of several terms', () => {
  it('takes a sentence holding all the asked terms but one, not one holding a single term', () => {
    const question = 'How much did the survey map cost?';
    expect(goesOnFromHeadline('The 38-day survey cost €4.2 million.', question)).toBe(true);
    expect(goesOnFromHeadline('The map alone cost €1 million.', 'How much did the survey vessel map cost?')).toBe(false);
  });
});

describe('a count asked ("how many …?")', () => {
  const VENTS = 'Survey maps 31 hydrothermal vents on the Calloway Ridge; deep-sea mining application paused';

  it('is told by the clause counting the thing, whatever verb says the count was made', () => {
    for (const question of ['How many vents were found?', 'How many vents did the survey map?', 'How many vents were identified?'])
      expect(headlineMeasure(question, VENTS)).toBe('Survey maps 31 hydrothermal vents on the Calloway Ridge');
    expect(headlineMeasure('How many cases were reported?', 'Port Avelin measles outbreak reaches 140 cases; school vaccination clinics extended')).toBe(
      'Port Avelin measles outbreak reaches 140 cases',
    );
  });

  it('is not told by a number of another thing, nor by a clause missing the deed asked', () => {
    expect(headlineMeasure('How many vents were found?', 'Vent survey finds 12 new species')).toBeNull();
    expect(headlineMeasure('How many people died?', 'Storm: 12 people missing')).toBeNull();
    expect(headlineMeasure('How many users were hit?', 'Exchange halts withdrawals for 212,000 users')).toBeNull();
  });

  it('goes on with sentences counting the thing, not with numbers beside it', () => {
    const question = 'How many vents did the survey map?';
    expect(goesOnFromHeadline('The survey mapped 31 active vents along the ridge.', question)).toBe(true);
    expect(goesOnFromHeadline('The 38-day survey mapped 140 kilometres of the ridge.', question)).toBe(false);
    expect(goesOnFromHeadline('Around the vents the team found four candidate new species.', 'How many vents were found?')).toBe(false);
  });
});

describe('a price asked ("how much … cost?")', () => {
  it('is told by the clause holding an amount of money beside the thing priced', () => {
    expect(headlineMeasure('How much will the tram cost?', 'Vessbridge council approves €1.42 billion for the Harbour Line tram')).toBe(
      'Vessbridge council approves €1.42 billion for the Harbour Line tram',
    );
    expect(headlineMeasure('How much does the laptop cost?', 'Kestrel K1, a €899 RISC-V laptop, starts shipping; early benchmarks are mixed')).toBe(
      'Kestrel K1, a €899 RISC-V laptop, starts shipping',
    );
  });

  it('is not told by another number beside the thing', () => {
    expect(headlineMeasure('How much will the tram cost?', 'Harbour Line tram opens with 19 stops')).toBeNull();
    expect(goesOnFromHeadline('The tram will have 19 stops.', 'How much will the tram cost?')).toBe(false);
    expect(goesOnFromHeadline('The council approved a budget of €1.42 billion for the tram.', 'How much will the tram cost?')).toBe(true);
  });
});

describe('a change asked of people', () => {
  it('is told by the clause telling the change, whoever the headline says it happened to', () => {
    const title = 'Weekly weight-loss pill orvaglutide cuts body weight by 13.2% in phase 3 trial';
    expect(headlineMeasure('How much weight did people lose?', title)).toBe(title);
    expect(headlineMeasure('How much weight did patients lose?', title)).toBeNull();
    expect(headlineMeasure('How many people died?', 'Storm: 12 people missing; roads closed')).toBeNull();
    // Unless they are what is counted: `phase 3 trial` counts no people.
    expect(headlineMeasure('How many people were in the trial?', title)).toBeNull();
    expect(headlineMeasure('How many people were admitted?', 'Outbreak reaches 140 cases; 38 people admitted to hospital')).toBe(
      '38 people admitted to hospital',
    );
  });
});

describe('a sentence giving the headline’s figure again', () => {
  it('goes on from it in words of its own', () => {
    const headline = 'Aurelian Lines orders 12 methanol-powered container ships for $1.68 billion';
    const vessels = 'The vessels will be built by Seowon Heavy Industries for a total price of $1.68 billion.';
    expect(goesOnFromHeadline(vessels, 'How much did the ships cost?', headline)).toBe(true);
    expect(goesOnFromHeadline(vessels, 'How much did the ships cost?')).toBe(false);
    // A small whole number, or a year, is too often another thing's.
    expect(goesOnFromHeadline('Deliveries begin on 12 January.', 'How many ships did Aurelian order?', headline)).toBe(false);
    expect(goesOnFromHeadline('The depot opened in 2026 at a cost of €3 million.', 'How much will the line cost?', 'Line costs €9 million in 2026')).toBe(
      false,
    );
  });
});

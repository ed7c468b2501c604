/** "Who is quoted?": the question, the people an item's sentences give words to, and the built-in model's answer. */
import { describe, expect, it } from 'vitest';
import { newNonce, renderGroundedPrompt, type GroundedSource } from '../../src/ai/grounded-prompt.js';
import { asksWhoIsQuoted } from '../../src/ai/item-questions.js';
import { LocalChatModel } from '../../src/ai/local/local-chat.js';
import { quotedOverview, quotedPeople } from '../../src/ai/local/quoted-people.js';

describe('a question of who an item quotes', () => {
  it.each([
    'Who is quoted?',
    'Who is quoted in the article?',
    'who is quoted in it',
    'So who gets quoted in this story?',
    'Who does the article quote?',
    'Which experts are quoted?',
    'What sources does this piece cite?',
    'Who are the people quoted in the video?',
    'Who spoke in the article?',
    'Who is the guest?',
    'Who are the speakers in the video?',
  ])('"%s" is one', (question) => {
    expect(asksWhoIsQuoted(question)).toBe(true);
  });

  it.each([
    'Who is quoted as saying the line will open in 2031?',
    'What did the minister say?',
    'Who wrote this?',
    'Who spoke at the meeting?',
    `Who is quoted?${' '.repeat(300)}`,
  ])('"%s" is not', (question) => {
    expect(asksWhoIsQuoted(question)).toBe(false);
  });
});

describe('the people an item quotes', () => {
  it('are read after the verb, before it, and with a role before the name', () => {
    const text =
      '"This is the biggest investment in a generation," said Selma Achterberg, the deputy mayor responsible for transport, who has championed it. ' +
      "Kestrel's founder, Aino Pellervo, said the A8 was the first such chip. " +
      'According to Dr. Rosalind Achebe-Vos, the outbreak is slowing.';
    expect(quotedPeople(text)).toEqual([
      { name: 'Selma Achterberg', role: 'the deputy mayor responsible for transport' },
      { name: 'Aino Pellervo', role: "Kestrel's founder" },
      { name: 'Dr. Rosalind Achebe-Vos' },
    ]);
  });

  it('join a surname quoted alone to the full name written anywhere, and leave out a name of one word that ends none', () => {
    const text =
      'About six hours later, Nils Lund, a 19-year-old physics student, picked it up. "I thought it was a smudge," Lund said. Kestrel said it designed the machine around the law.';
    expect(quotedPeople(text)).toEqual([{ name: 'Nils Lund' }]);
  });

  it('are no pronoun, heading, body or group, and no title before a name', () => {
    const text =
      '"It is a novel made of lists," he said. ' +
      'The Port Avelin Public Health Office said 38 people had been admitted. ' +
      'Tessera Data, the company behind TesseraDB, said it will stop. Tessera Data said existing releases remain. ' +
      'The industry association Digital Lowmark warned that prices would rise. ' +
      'A spokesperson said Nimbic SQL customers would see no disruption. ' +
      'NISSAN SENTRA\n\nNissan said sales rose. ' +
      'Interior Minister Wolfgang Peschorn said the house would be rebuilt.';
    expect(quotedPeople(text)).toEqual([{ name: 'Wolfgang Peschorn' }]);
  });

  it('are an interview’s guests', () => {
    const text =
      'Days after winning the prize, archivist and novelist Tove Marangoni joins us from the records office. ' +
      "An interview with Ann Lee, the bank's economist, about rates. We sat down with Dr. Bo Ek.";
    expect(quotedPeople(text)).toEqual([{ name: 'Tove Marangoni' }, { name: 'Ann Lee', role: "the bank's economist" }, { name: 'Dr. Bo Ek' }]);
    expect(quotedOverview([{ n: 1, content: text }], 'video')).toBe(
      "The video features Tove Marangoni [1]; Ann Lee, the bank's economist [1]; and Dr. Bo Ek [1].",
    );
  });

  it('are found in a long sentence of many attributions, each once', () => {
    const text = Array.from({ length: 3000 }, (_, i) => `said Ann Lee, ${'a'.repeat(60)} ${i}`).join(', ');
    expect(quotedPeople(text).map((p) => p.name)).toEqual(['Ann Lee']);
  });
});

describe('the built-in model asked who is quoted', () => {
  const model = new LocalChatModel();
  const article: GroundedSource = {
    n: 1,
    label: 'Vessbridge council approves the Harbour Line',
    roomItem: true,
    content:
      '"This is the biggest investment this city has made in a generation," said Selma Achterberg, the deputy mayor responsible for transport. ' +
      '"The price has gone up by almost half," said Pieter Vandamme-Ross. "Not a single rail has been laid," he said.',
  };
  const ask = (question: string, sources: GroundedSource[]) =>
    model.answer([{ role: 'user', content: renderGroundedPrompt({ topic: article.label, item: { kind: 'article' }, sources, question }, newNonce()) }]);

  it('lists each person once with their role, citing the source', async () => {
    expect(await ask('Who is quoted in the article?', [article])).toBe(
      'The article quotes Selma Achterberg, the deputy mayor responsible for transport [1] and Pieter Vandamme-Ross [1].',
    );
  });

  it('says plainly when no one is quoted by name', async () => {
    expect(await ask('Who is quoted?', [{ ...article, content: 'The council approved the budget on Wednesday.' }])).toBe(
      'I found no one quoted by name in this article.',
    );
  });

  it('shows a name and a role as typed, no markup', () => {
    expect(quotedOverview([{ n: 2, content: 'said Ann Lee, the head of *Bold* [design] <b>x</b>, on Monday.' }])).toBe(
      'The article quotes Ann Lee, the head of \\*Bold\\* \\[design\\] \\<b\\>x\\</b\\> [2].',
    );
  });
});

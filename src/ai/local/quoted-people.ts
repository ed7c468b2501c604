/**
 * Who an item quotes: the people its sentences give words to (`said Selma Achterberg, the deputy
 * mayor`, `Kestrel's founder, Aino Pellervo, said`, `according to Dr. Lind`). "Who is quoted?"
 * shares no word with the sentences that answer it, so the pipeline gives the prompt the item's
 * attributed sentences (attributes) and the built-in model lists the people in them.
 */
import { markdownLiteral } from '../../protocol/markdown-literal.js';
import { splitSentences } from './extractive-text.js';

/** A person (or body) an item quotes, with the role the item gives them where it does. */
export interface QuotedPerson {
  name: string;
  role?: string;
}

const VERB = '(?:said|says|told|added|explained|warned|noted|argued|wrote|insisted|admitted|stated|recalled|replied|cautioned|conceded|acknowledged)';
const TITLE = '(?:(?:Dr|Mr|Mrs|Ms|Prof|Sir|Dame)\\.?\\s+)';
/** A capitalised word, ending in a letter: `'Ember Tide',` is a title in quotes. */
const WORD = "\\p{Lu}(?:[\\p{L}\\p{M}'’-]*[\\p{L}\\p{M}])?";
const PARTICLE = '(?:van|von|de|da|del|der|den|la|le|bin|al|ter|ten)';
/** Up to four capitalised words on one line (a particle between them allowed), a title before them. */
const NAME = `${TITLE}?${WORD}(?:[^\\S\\n]+(?:${PARTICLE}[^\\S\\n]+)?${WORD}){0,3}`;
/** An appositive role of two words or more: `the deputy mayor responsible for transport`, `Kestrel's founder`; no clause (`, it was`, `, meanwhile`). */
const ROLE =
  "(?!(?:and|but|or|so|then|adding|saying|as|when|while|because|if|it|he|she|they|we|was|is|are|were|has|had|have|meanwhile|however|also)\\b)(?:the|a|an|its|his|her|their|(?:\\p{Lu}[\\p{L}'’-]*\\s+){0,2}\\p{Lu}[\\p{L}'’-]*['’]s|\\p{Ll}[\\p{L}'’-]*\\s)[^,.;:\"“”()\\n]{1,80}?";

/** A capitalised run that begins nothing but a sentence, or names a group rather than a person. */
const NOT_A_NAME_START = new Set(
  (
    'he she they it we i you this that these those the a an there and but or so yet while whatever whoever when if as in on at after before ' +
    'meanwhile still now then also instead however officials critics reviewers residents analysts experts researchers scientists police some many others both'
  ).split(' '),
);
/**
 * Titles and posts written before a name (`Interior Minister Wolfgang Peschorn`, `Secretary of State
 * Mike Pompeo`): taken off while two words of the name are left, so `Prince Andrew` stays whole.
 */
const LEADING_TITLE = new Set(
  (
    'president vice secretary state minister prime chancellor senator sen rep governor gov mayor deputy general gen judge justice chairman ' +
    'chairwoman chair ceo cfo cto coo chief coach captain commissioner director interior foreign finance health defence defense economy us uk'
  ).split(' '),
);
/** A word in capitals (`NISSAN`, `CEO`): a heading's, a product's or an acronym, no person's name. */
const CAPITALS = /^\p{Lu}{2,}$/u;

// After the verb: `said Selma Achterberg, the deputy mayor …`. Before it: `Achterberg said`,
// `Aino Pellervo, Kestrel's founder, said`, with a role before the name (`Kestrel's founder, Aino
// Pellervo, said`) read from the text before the match. No capitalised word right before the name:
// `Public Health Office said` is not `Health Office`'s (a lower-case one may be: `novelist Tove Marangoni`).
// The name ends its clause: `said Nimbic SQL customers would …` reports what someone else said.
const AFTER_VERB = new RegExp(
  `\\b${VERB}\\s+(${NAME})(?:,\\s+(${ROLE})(?=,|\\.|;|$))?(?=\\s*(?:[,.;:!?"”)]|$)|\\s+(?:on|in|at|of|last|this|yesterday|today)\\b)`,
  'gu',
);
const BEFORE_VERB = new RegExp(`(?<!\\p{Lu}[\\p{L}'’-]*\\s)(${NAME})(?:,\\s+(${ROLE}))?,?\\s+${VERB}\\b`, 'gu');
/** Words putting a guest before an interview's audience: `an interview with`, `we sat down with`. */
const INTERVIEWED =
  '(?:[Ii]nterview(?:s|ed)?(?:\\s+with)?|(?:talks?|talked|speaks?|spoke|sits?\\s+down|sat\\s+down)\\s+(?:to|with)|in\\s+conversation\\s+with|joined\\s+by)';
// An interview's guest: `novelist Tove Marangoni joins us`, `in conversation with Ann Lee`.
const JOINS_US = new RegExp(`(?<!\\p{Lu}[\\p{L}'’-]*\\s)(${NAME})\\s+(?:joins|joined)\\s+us\\b`, 'gu');
const TALKS_WITH = new RegExp(`\\b${INTERVIEWED}\\s+(${NAME})(?:,\\s+(${ROLE})(?=,|\\.|;|$))?`, 'gu');
// A role here is closed by a comma: after `According to Dr. Lind, ` comes what she said.
const ACCORDING_TO = new RegExp(`\\b[Aa]ccording\\s+to\\s+(${NAME})(?:,\\s+(${ROLE})(?=,))?`, 'gu');
/** A role written before the name: the sentence's opening words up to `, <name>,`. */
const ROLE_BEFORE = new RegExp(`^(${ROLE}),\\s+$`, 'u');
/** How far before a name its role or the noun calling it is looked for: a role is at most ~80 characters. */
const LOOK_BACK_CHARS = 100;
/** The lower-case word right before a name (`association` in `The industry association Digital Lowmark`). */
const CALLED_BEFORE = /(?:^|\s)(\p{Ll}[\p{L}-]*)\s+$/u;
const ATTRIBUTED = new RegExp(`\\b(?:${VERB}|[Aa]ccording\\s+to|joins\\s+us|joined\\s+us|${INTERVIEWED})\\b`, 'u');
/** Words of a body's name rather than a person's. */
const BODY_WORD =
  /\b(?:Office|Council|Ministry|Department|Agency|Bureau|Company|Systems|Inc|Ltd|University|Court|Centre|Center|Association|Union|Party|Bank|Group|Authority|Commission|Committee|Board|Institute|Service|Government|Police|Times|News|Review|Daily|Foundation|Energy|Cloud|Labs|Technologies|Motors|Airlines|Media|Studios|Games|Partners|Capital|Holdings|Corp|Corporation|Metals|Mining|Resources|Industries|Therapeutics|Pharma|Pharmaceuticals|Software|Networks|Robotics|Aerospace|Shipping|Logistics|Press|Publishing|Books|Records|Pictures|Trust|Federation|Alliance|Network|Exchange)\b/u;
/** The head of a role naming a body, not a person's post: `the sodium-ion battery start-up based in …`. */
const BODY_ROLE =
  /\b(?:start-?up|company|firm|maker|manufacturer|operator|agency|organi[sz]ation|office|department|ministry|council|authority|bank|fund|union|association|party|group|provider|developer|studio|publisher|regulator|retailer|chain|carrier|airline|utility|website|newspaper|broadcaster|issuer|lender|insurer|exchange|federation|alliance|trust)$/i;
/** Where a role's head noun ends: before what qualifies it. */
const ROLE_HEAD_END = /\s+(?:of|at|in|for|from|based|that|which|who|with|on|responsible|behind)\b.*$/s;

/** Whether `sentence` gives words to someone (a verb of saying, "according to", an interview's `joins us`). */
export function attributes(sentence: string): boolean {
  return ATTRIBUTED.test(sentence);
}

/**
 * The people `text`'s sentences quote, in order of first mention, one entry each: a surname alone
 * joins the full name it ends, quoted or written in `text` or in `context` (the whole of which
 * `text` is a part).
 */
export function quotedPeople(text: string, context = text): QuotedPerson[] {
  const found: QuotedPerson[] = [];
  // Names a role shows to be a body's (`Tessera Data, the company behind …`, `Tessera Data's chief
  // executive`): left out wherever they speak.
  const bodies = new Set<string>();
  for (const { text: sentence } of splitSentences(text)) {
    if (!attributes(sentence)) continue;
    for (const pattern of [AFTER_VERB, BEFORE_VERB, ACCORDING_TO, JOINS_US, TALKS_WITH]) {
      for (const m of sentence.matchAll(pattern)) {
        const name = withoutTitles(m[1].trim());
        if (!isPersonName(name)) continue;
        // Only the words just before the match are read: each match reading all before it was
        // quadratic in a long sentence's length.
        const lead = sentence.slice(Math.max(0, m.index - LOOK_BACK_CHARS), m.index);
        const before = pattern === BEFORE_VERB && !m[2] && m.index <= LOOK_BACK_CHARS ? ROLE_BEFORE.exec(lead)?.[1] : undefined;
        const given = (m[2] ?? before)?.trim();
        const role = given && !/^(?:who|which|that)\b/i.test(given) ? given : undefined;
        if (role && BODY_ROLE.test(role.replace(ROLE_HEAD_END, ''))) {
          bodies.add(name);
          continue;
        }
        // `The industry association Digital Lowmark warned`: the noun before the name says what it is.
        const calledBefore = CALLED_BEFORE.exec(lead)?.[1];
        if (!role && calledBefore && BODY_ROLE.test(calledBefore)) {
          bodies.add(name);
          continue;
        }
        const owner = role && /^((?:\p{Lu}[\p{L}'’-]*\s+){0,2}\p{Lu}[\p{L}'’-]*)['’]s\s/u.exec(role)?.[1];
        if (owner) bodies.add(owner);
        found.push({ name, ...(role ? { role } : {}) });
      }
    }
  }
  return merged(
    found.filter((p) => !bodies.has(p.name)),
    fullNamesIn(context),
  );
}

const FULL_NAME = new RegExp(`(?<!\\p{Lu}[\\p{L}'’-]*\\s)${NAME}`, 'gu');

/** The names of two words or more `text` writes anywhere (`signed by … Dana Okonkwo-Reyes`), for a surname quoted alone. */
function fullNamesIn(text: string): string[] {
  return [...text.matchAll(FULL_NAME)].map((m) => withoutTitles(m[0])).filter((name) => name.split(/\s+/).length > 1 && isPersonName(name));
}

function isPersonName(name: string): boolean {
  const words = name.split(/\s+/);
  return !NOT_A_NAME_START.has(words[0].toLowerCase()) && !BODY_WORD.test(name) && !words.some((w) => CAPITALS.test(w));
}

/** `name` without the titles before it (LEADING_TITLE), two of its words left at least. */
function withoutTitles(name: string): string {
  const words = name.split(/\s+/);
  let at = 0;
  while (words.length - at > 2 && LEADING_TITLE.has(words[at].replace(/\.$/, '').toLowerCase())) at++;
  return words.slice(at).join(' ');
}

/**
 * One entry a person: a surname alone (`Lund said`) is the full name's it ends (`Nils Lund`),
 * quoted or only `written` elsewhere in the text, and a name of one word that ends none is left out (`Kestrel said`: a company, mostly). The first
 * role given is kept.
 */
function merged(found: QuotedPerson[], written: string[]): QuotedPerson[] {
  // The first full name ending in each surname, the quoted ones before those only written.
  const bySurname = new Map<string, QuotedPerson>();
  for (const person of [...found, ...written.map((name): QuotedPerson => ({ name }))]) {
    const words = person.name.split(/\s+/);
    if (words.length > 1 && !bySurname.has(words.at(-1)!)) bySurname.set(words.at(-1)!, person);
  }
  const out = new Map<string, QuotedPerson>();
  for (const person of found) {
    const words = person.name.split(/\s+/);
    const whole = words.length > 1 ? person : bySurname.get(person.name);
    if (!whole) continue;
    const key = whole.name.split(/\s+/).at(-1)!;
    const known = out.get(key);
    if (!known) out.set(key, { name: whole.name, ...(person.role ? { role: person.role } : whole.role ? { role: whole.role } : {}) });
    else if (!known.role && person.role) known.role = person.role;
  }
  return [...out.values()];
}

/** A source of the prompt, as the answer cites it. */
interface Cited {
  n: number;
  content: string;
}

/**
 * The answer to "who is quoted?" from `sources` (the room's item first): each person once, with
 * their role, citing the source naming them; null when no one is quoted by name.
 */
export function quotedOverview(sources: Cited[], kind = 'article'): string | null {
  const listed: string[] = [];
  const seen = new Set<string>();
  for (const source of sources) {
    for (const person of quotedPeople(source.content)) {
      const key = person.name.split(/\s+/).at(-1)!;
      if (seen.has(key)) continue;
      seen.add(key);
      listed.push(`${markdownLiteral(person.name)}${person.role ? `, ${markdownLiteral(person.role)}` : ''} [${source.n}]`);
    }
  }
  if (!listed.length) return null;
  const last = listed.pop()!;
  // A video's people speak in it: it features them.
  const verb = kind === 'video' ? 'features' : 'quotes';
  return `The ${kind} ${verb} ${listed.length ? `${listed.join('; ')}${listed.length > 1 ? ';' : ''} and ${last}` : last}.`;
}

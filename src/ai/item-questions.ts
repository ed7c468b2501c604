/**
 * Questions about the room's own item rather than what it says: "who wrote this?", "when was
 * this video posted?", "which site is this from?". The pipeline keeps such a question to the
 * room's item, and the built-in model answers it from the item's details (GroundedPrompt.item).
 */
import type { ItemDetails } from '../content/item-details.js';

/** What a question asks of the item: its maker, its date or its site. */
export type DetailAsked = 'author' | 'published' | 'site';

const NOUN = '(?:article|piece|story|post|blog\\s+post|blog|video|clip|report|essay|column|op-?ed|interview|episode|write-?up|page|item)';
/**
 * The item, pointed at: "this", "this article", "the video". Never a bare "it" nor "the" before
 * another word: "who made it?" and "who made the laptop?" in a laptop's room ask about the laptop.
 */
const ITEM = `(?:(?:this|that)(?:\\s+${NOUN})?|the\\s+${NOUN})`;
/** The item named by its noun ("this article", "the video"): "who is behind this?" in a ransomware attack's room asks about the attack. */
const NAMED_ITEM = `(?:this|that|the)\\s+${NOUN}`;
const OF_ITEM = `(?:\\s+(?:of|for|behind)\\s+${ITEM})?`;
/** Who made an item, named alone: "who is the author?" asks the byline in any item's room. */
const MAKER = '(?:author|writer|reporter|journalist|blogger|uploader)';
/** Who made something, named with the item only: "who is the maker?" in a laptop's room asks about the laptop. */
const MAKER_OF = '(?:creator|maker|host|narrator|presenter)';
const MADE = '(?:wrote|writes|authored|penned|made|created|produced|posted|published|filmed|uploaded|shot|narrated|presented|reported)';
const PUT_OUT = '(?:published|posted|written|uploaded|put\\s+(?:out|up|online)|made|filmed|recorded|first\\s+published)';
const COME_OUT = '(?:come\\s+out|go\\s+(?:up|online|live)|get\\s+published)';
const OUTLET = '(?:site|website|publication|outlet|newspaper|paper|magazine|blog|news\\s*(?:site|outlet|source|organi[sz]ation)|channel)';

const ASKS: [DetailAsked, RegExp][] = [
  ['author', new RegExp(`^who\\s+${MADE}\\s+${ITEM}$`)],
  ['author', new RegExp(`^who(?:'s|\\s+is|\\s+was)\\s+${ITEM}\\s+(?:by|from)$`)],
  ['author', new RegExp(`^who(?:'s|\\s+is|\\s+was|\\s+are|\\s+were)\\s+(?:the\\s+)?${MAKER}s?${OF_ITEM}$`)],
  ['author', new RegExp(`^who(?:'s|\\s+is|\\s+was|\\s+are|\\s+were)\\s+(?:the\\s+)?${MAKER_OF}s?\\s+(?:of|for|behind)\\s+${ITEM}$`)],
  ['author', new RegExp(`^who(?:'s|\\s+is|\\s+are)\\s+behind\\s+${NAMED_ITEM}$`)],
  ['author', new RegExp(`^(?:what|which)(?:'s|\\s+is|\\s+was)\\s+(?:the\\s+)?(?:${MAKER}'s\\s+name|name\\s+of\\s+the\\s+${MAKER})${OF_ITEM}$`)],
  ['author', new RegExp(`^by\\s+whom\\s+(?:was|is)\\s+${ITEM}\\s+${PUT_OUT}$`)],
  [
    'author',
    new RegExp(
      `^(?:what|which)\\s+channel\\s+(?:is\\s+${ITEM}(?:\\s+(?:from|on))?|${MADE}\\s+${ITEM}|(?:was|is)\\s+${ITEM}\\s+(?:on|from|${PUT_OUT}\\s+(?:on|by)))$`,
    ),
  ],
  ['published', new RegExp(`^when\\s+(?:was|were|is)\\s+${ITEM}\\s+(?:${PUT_OUT}|released)$`)],
  ['published', new RegExp(`^when\\s+did\\s+${ITEM}\\s+(?:${COME_OUT}|get\\s+released)$`)],
  ['published', new RegExp(`^when\\s+is\\s+${ITEM}\\s+from$`)],
  ['published', new RegExp(`^how\\s+(?:old|recent|new)\\s+is\\s+${ITEM}$`)],
  [
    'published',
    new RegExp(
      `^(?:what|which)(?:'s|\\s+is|\\s+was)\\s+(?:the\\s+)?(?:(?:publication|publishing|published|publish|upload|posting)\\s+date|date\\s+of\\s+publication)${OF_ITEM}$`,
    ),
  ],
  // A date or release date asked alone is the subject's: "what's the date?" of an election, "what's the release date?" of a console.
  ['published', new RegExp(`^(?:what|which)(?:'s|\\s+is|\\s+was)\\s+(?:the\\s+)?(?:release\\s+)?date\\s+(?:of|for)\\s+${ITEM}$`)],
  [
    'site',
    new RegExp(
      `^(?:what|which)\\s+(?!channel)${OUTLET}\\s+(?:is\\s+${ITEM}(?:\\s+(?:from|on|in))?|${MADE}\\s+${ITEM}|ran\\s+${ITEM}|(?:was|is)\\s+${ITEM}\\s+(?:from|on|in|${PUT_OUT}\\s+(?:on|in|by)))$`,
    ),
  ],
  ['site', new RegExp(`^where\\s+(?:was|is)\\s+${ITEM}\\s+(?:${PUT_OUT}|from)$`)],
  ['site', new RegExp(`^where\\s+(?:does|did)\\s+${ITEM}\\s+come\\s+from$`)],
];

const QUESTION_MAX_CHARS = 160;

/** The nouns an item of each kind is called by in a question about it. */
const KIND_NOUNS: Record<ItemDetails['kind'], string> = {
  article: '(?:article|piece|story|write-?up)',
  post: '(?:blog\\s+post|post|blog|article|piece|write-?up)',
  video: '(?:video|clip)',
};
/**
 * What follows the item's noun when it names the item: a verb of telling or being, a preposition,
 * a conjunction or the end. Not another noun: "the post office", "the video game", "the post
 * mortem" (in the room of a post about one) are things of their own.
 */
const NAMED_BEFORE =
  '(?=\\s*(?:$|[?!.,;:)]|(?:say|says|said|tell|tells|told|mention|mentions|mentioned|quote|quotes|quoted|claim|claims|claimed|argue|argues|argued|show|shows|showed|cover|covers|covered|discuss|discusses|discussed|describe|describes|described|explain|explains|explained|suggest|suggests|suggested|mean|means|is|was|are|were|does|did|has|have|had|about|on|for|from|with|by|in|and|or|but|to|at)\\b))';
const ITEM_NAMED = Object.fromEntries(
  Object.entries(KIND_NOUNS).map(([kind, noun]) => [
    kind,
    new RegExp(`(?:\\b(?:in|from|of|on|by|about|for)\\s+)?\\b(?:this|that|the)\\s+${noun}(?:(?:'s|’s)\\b|${NAMED_BEFORE})`, 'gi'),
  ]),
) as Record<ItemDetails['kind'], RegExp>;

/**
 * `question` without the room's item (of `kind`) named by its noun ("what does the article say
 * about the keyboard?", "who is quoted in this story?"), with the preposition before it; null when
 * it names none. The noun says which source, not what is asked: searched for, "article" weighed as
 * much as "keyboard", and the question was judged off the laptop article's subject.
 */
export function withoutItemNamed(question: string, kind: ItemDetails['kind']): string | null {
  const named = ITEM_NAMED[kind];
  if (question.search(named) < 0) return null;
  const left = question
    .replace(named, ' ')
    .replace(/\s+([?!.,;:])/g, '$1')
    .replace(/\s{2,}/g, ' ')
    .trim();
  return /[\p{L}\p{N}]/u.test(left) ? left : null;
}

/** The item's maker as one whose views a question asks: "the author", "the host of this video". */
const STANCE_HOLDER = `(?:the|this|that)\\s+(?:author|writer|blogger|poster|reporter|journalist|columnist|host|presenter|narrator|creator|youtuber|vlogger)(?:\\s+(?:of|behind)\\s+(?:this|that|the)\\s+${NOUN})?`;
const ABOUT = '(?:about|of|on|regarding|concerning|towards?)';
const VIEW = '(?:view|views|opinion|opinions|position|stance|take|verdict|thoughts|feelings|attitude)';
/**
 * Questions asking what the item's maker thinks, each with the part (group 1) that says of what,
 * asked then as "what does it say about …?"; an empty part asks the item's argument as a whole.
 */
const STANCES: RegExp[] = [
  new RegExp(`^(?:what|how)\\s+(?:does|did|do)\\s+${STANCE_HOLDER}\\s+(?:think|feel|believe|say|write|make)\\s+${ABOUT}\\s+(.+)$`, 'i'),
  new RegExp(`^what(?:'s|\\s+is|\\s+was|\\s+are|\\s+were)\\s+${STANCE_HOLDER}'s\\s+${VIEW}\\s+${ABOUT}\\s+(.+)$`, 'i'),
  new RegExp(
    `^(?:does|did|do|would|will|could|might)\\s+${STANCE_HOLDER}\\s+(?:really\\s+|still\\s+)?(?:support|like|dislike|love|hate|oppose|favou?r|endorse|recommend|back|trust|want|agree\\s+with|disagree\\s+with|approve\\s+of|think|believe|feel|say|argue|claim|suggest)\\s+(?:that\\s+)?(.+)$`,
    'i',
  ),
  new RegExp(
    `^what\\s+(?:does|did|do)\\s+${STANCE_HOLDER}\\s+(?:think|believe|argue|want|propose|recommend|suggest|conclude|claim|mean)(?:\\s+(?:changed|done|to\\s+change|to\\s+happen|(?:us\\s+)?to\\s+do))?()$`,
    'i',
  ),
  new RegExp(`^what(?:'s|\\s+is|\\s+was)\\s+${STANCE_HOLDER}'s\\s+(?:${VIEW}|argument|point|conclusion|message|thesis)()$`, 'i'),
];
/** A stance's object that is the item's subject itself. */
const ITSELF = /^(?:it|this|that|them|these|those|this\s+one|that\s+one)$/i;
/** "According to the author, …", "… in the writer's view": who says it, around a question of its own. */
const ACCORDING_TO = new RegExp(
  `^(?:according\\s+to|in)\\s+${STANCE_HOLDER}(?:'s\\s+${VIEW})?\\s*,?\\s+|,?\\s+(?:according\\s+to|in)\\s+${STANCE_HOLDER}(?:'s\\s+${VIEW})?(?=\\s*[?!.]*$)`,
  'i',
);

/**
 * `question` asked of the room's item when it asks what the item's maker thinks ("what does the
 * author think about crunch?", "does the writer support the tram?", "… according to the author?"),
 * or null when it asks no such thing. The maker holds the item's views: searched for, "author" and
 * "think" weighed as much as "crunch", and a post whose every paragraph argues about crunch was
 * judged not to cover it.
 */
export function withoutMakerStance(question: string): string | null {
  if (question.length > QUESTION_MAX_CHARS) return null;
  const trimmed = question
    .trim()
    .replace(/[’‘]/g, "'")
    .replace(/[\s?!.]+$/, '');
  for (const stance of STANCES) {
    const m = stance.exec(trimmed);
    // "Would the author recommend it?": the item's own subject, asked as its argument.
    if (m) return m[1] && !ITSELF.test(m[1]) ? `What does it say about ${m[1]}?` : 'What is the main argument?';
  }
  const left = trimmed.replace(ACCORDING_TO, '');
  if (left === trimmed || !/[\p{L}\p{N}]/u.test(left)) return null;
  return `${left.charAt(0).toUpperCase()}${left.slice(1)}?`;
}

/** What `question` asks of the room's own item (its maker, date or site), or null when it asks something else. */
export function detailAsked(question: string): DetailAsked | null {
  const asked = plainShortQuestion(question);
  if (asked === null) return null;
  for (const [detail, pattern] of ASKS) if (pattern.test(asked)) return detail;
  return null;
}

const IN_ITEM = `(?:\\s+(?:in|by|from)\\s+(?:it|${ITEM}))?`;
const QUOTED = '(?:quoted|interviewed|cited)';
const QUOTES = [
  new RegExp(`^who(?:'s|\\s+is|\\s+are|\\s+was|\\s+were|\\s+gets|\\s+got)\\s+(?:being\\s+)?${QUOTED}${IN_ITEM}$`),
  new RegExp(`^who\\s+(?:does|did)\\s+(?:it|${ITEM})\\s+(?:quote|cite|interview)$`),
  new RegExp(
    `^(?:which|what)\\s+(?:people|persons|experts|officials|sources|voices|names)\\s+(?:(?:are|were)\\s+${QUOTED}${IN_ITEM}|(?:does|did)\\s+(?:it|${ITEM})\\s+(?:quote|cite|interview))$`,
  ),
  new RegExp(`^who(?:'s|\\s+is|\\s+are)\\s+the\\s+(?:people|persons|experts|sources|voices)\\s+${QUOTED}${IN_ITEM}$`),
  new RegExp(`^who\\s+(?:speaks|spoke|talks|talked|is\\s+speaking|comments|commented)\\s+in\\s+(?:it|${ITEM})$`),
  new RegExp(`^who(?:'s|\\s+is|\\s+are|\\s+was|\\s+were)\\s+the\\s+(?:guests?|interviewees?|speakers?)${IN_ITEM}$`),
];

/** Whether `question` asks who the room's item quotes: "who is quoted?", "who does the article quote?". */
export function asksWhoIsQuoted(question: string): boolean {
  const asked = plainShortQuestion(question);
  return asked !== null && QUOTES.some((pattern) => pattern.test(asked));
}

/** `question` lower-cased, its opening filler and closing marks off; null when too long to be a question of the item (these, a video's chapters). */
export function plainShortQuestion(question: string): string | null {
  // A short question is all these ask; a long one is not read (the trims below scan its end).
  if (question.length > QUESTION_MAX_CHARS) return null;
  return question
    .toLowerCase()
    .replace(/[’‘]/g, "'")
    .replace(/^[\s"'“(]*(?:(?:so|and|ok|okay|hey|hi|btw|quick question)\b[\s,:;-]*)*/, '')
    .replace(/[\s?!.,"'”)]+$/, '')
    .replace(/\s+/g, ' ');
}

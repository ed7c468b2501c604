/**
 * What the assistant says to a message that asks nothing of the sources: thanks, a greeting, "who
 * are you?". Read as questions, "thanks!" and "hello" were answered "The sources I found do not
 * answer this question." (the built-in model), or with every source searched listed under the
 * answer. The pipeline answers them itself (PreparedAnswer.reply): no search, no model, no sources.
 */

/** A courtesy put to the assistant, or what it is asked of itself. */
export type Courtesy = 'thanks' | 'greeting' | 'identity';

const ADDRESSED = String.raw`(?:[\s,]+(?:ai|salon(?:\s+ai)?|bot|assistant|there|all|everyone))?`;
const THANKS_ONLY = new RegExp(
  String.raw`^\W*(?:(?:ok(?:ay)?|great|perfect|cool|nice|awesome|got it|good|brilliant|excellent|that helps)[\s,!.]*)?(?:thanks|thank you|thank u|thx|ty|cheers|many thanks|much appreciated|appreciate it)(?:\s+(?:so much|a lot|very much|again))?${ADDRESSED}\W*$`,
  'i',
);
const GREETING_ONLY = new RegExp(String.raw`^\W*(?:hi|hello|hey|hiya|howdy|good (?:morning|afternoon|evening)|greetings)${ADDRESSED}\W*$`, 'i');
const IDENTITY = /^\W*(?:(?:who|what)\s+are\s+you|what\s+can\s+you\s+do|what\s+do\s+you\s+do|how\s+do\s+i\s+use\s+(?:you|this)|help)\W*$/i;
/** Longer messages are questions, whatever words they open with. */
const COURTESY_MAX_CHARS = 80;

/** What courtesy `message` is, or null when it asks something. */
export function courtesyOf(message: string): Courtesy | null {
  if (message.length > COURTESY_MAX_CHARS) return null;
  if (THANKS_ONLY.test(message)) return 'thanks';
  if (GREETING_ONLY.test(message)) return 'greeting';
  if (IDENTITY.test(message)) return 'identity';
  return null;
}

/** The reply to `courtesy` in a room about an item of `kind` (an article, a post, a video), or about a topic. */
export function courtesyReply(courtesy: Courtesy, kind?: string): string {
  const subject = kind ? `this ${kind}` : "this room's topic";
  switch (courtesy) {
    case 'thanks':
      return 'You are welcome.';
    case 'greeting':
      return `Hello! Ask me anything about ${subject} or about what has been said here.`;
    case 'identity':
      return `I am Salon AI, the room's assistant. I answer questions about ${subject} and about the discussion from the sources I find, citing them by number, and I say so when they do not hold the answer.`;
  }
}

/** Room ids: content rooms are content ids; topic rooms are `topic_<slug>` of a stored category. */

export const TOPIC_ROOM_PREFIX = 'topic_';

/** `Tech & Science` → `tech-science`: lowercased, runs of anything but letters and digits become `-`. */
export function topicSlug(category: string): string {
  return category
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '');
}

/** `topic_tech` for the category `Tech`. */
export function topicRoomId(category: string): string {
  return `${TOPIC_ROOM_PREFIX}${topicSlug(category)}`;
}

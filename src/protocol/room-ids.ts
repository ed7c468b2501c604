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

/** How a topic room's title starts (`Topic: Tech`): its category follows. */
export const TOPIC_TITLE_PREFIX = 'Topic: ';

/** The title of the topic room of `category`. */
export function topicRoomTitle(category: string): string {
  return `${TOPIC_TITLE_PREFIX}${category}`;
}

/** The category a topic room's title names, or null for any other title. */
export function categoryOfTopicTitle(title: string): string | null {
  return title.startsWith(TOPIC_TITLE_PREFIX) ? title.slice(TOPIC_TITLE_PREFIX.length) : null;
}

/**
 * URLs as anyone may read them: without their query and fragment. A private feed usually carries
 * its key there (`…/rss?token=…`), and the sources and their poll jobs are public, while the admin
 * who added them sees them whole.
 */

const URL_WITH_QUERY = /(\bhttps?:\/\/[^\s?#"'<>]*)[?#][^\s"'<>]*/gi;

/** `url` without its query and fragment. */
export function withoutQuery(url: string): string {
  return url.replace(URL_WITH_QUERY, '$1').split(/[?#]/, 1)[0];
}

/** `text` (an error message, a failure's reference) with the query and fragment of every http(s) URL in it removed. */
export function withoutQueries(text: string): string {
  return text.replace(URL_WITH_QUERY, '$1');
}

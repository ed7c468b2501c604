import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateItem } from '../../src/content/items.js';
import { videoEntriesFromJson, youtubeIdFromUrl } from '../../src/content/sources/videos.js';
import { CORPORA } from '../helpers.js';

const API = join(CORPORA, 'video/python-youtube/testdata/apidata/videos');
const read = (name: string) => JSON.parse(readFileSync(join(API, name), 'utf8'));
const opts = { bodyMaxChars: 200_000 };

function items(doc: unknown) {
  return videoEntriesFromJson(doc).map((e) => {
    if ('error' in e) throw e.error;
    return validateItem(e.item, opts);
  });
}

describe('YouTube Data API videos answers', () => {
  it('turns a videoListResponse into video items', () => {
    const [v] = items(read('videos_info_single.json'));
    expect(v).toMatchObject({
      id: 'video_D-lhorsDlUQ',
      kind: 'video',
      title: 'What are Actions on Google (Assistant on Air)',
      url: 'https://www.youtube.com/watch?v=D-lhorsDlUQ',
      channel: 'Google Developers',
      publishedAt: '2019-03-21T20:37:49.000Z',
      thumbnail: 'https://i.ytimg.com/vi/D-lhorsDlUQ/maxresdefault.jpg',
      category: 'Science & Technology',
      source: 'video-json',
    });
    expect(v.body).toContain('Actions on Google docs → http://bit.ly/2YabdS5');
    expect(v.description.length).toBeLessThanOrEqual(300);
  });

  it('reads every list answer in the corpus, and single youtube#video resources', () => {
    for (const f of [
      'videos_info_multi.json',
      'videos_chart_paged_1.json',
      'videos_chart_paged_2.json',
      'videos_myrating_paged_1.json',
      'videos_myrating_paged_2.json',
    ]) {
      const doc = read(f);
      const got = items(doc);
      expect(got.map((i) => i.title)).toEqual(doc.items.map((x: any) => x.snippet.title.trim().replace(/\s+/g, ' ')));
      expect(got.map((i) => i.id)).toEqual(doc.items.map((x: any) => `video_${x.id}`));
    }
    expect(items(read('insert_response.json'))[0].id).toBe('video_D-lhorsDlUQ');
  });

  it('reports an answer that holds no videos, entry by entry', () => {
    const [e] = videoEntriesFromJson(read('get_rating_response.json'));
    expect('error' in e && e.error.code).toBe('ERR_INVALID_CONTENT');
  });
});

describe("Salon's video JSON", () => {
  const video = {
    title: 'A talk',
    description: 'First sentence. Second sentence.',
    url: 'https://youtu.be/abcdEFGH123',
    channel: 'Chan',
    publishedAt: '2024-05-01T10:00:00Z',
    thumbnail: '/demo/img/v1.svg',
    category: 'Tech',
  };

  it('takes one object, an array or {items}, deriving ids from YouTube URLs', () => {
    expect(items(video)[0]).toMatchObject({ id: 'video_abcdEFGH123', channel: 'Chan', thumbnail: '/demo/img/v1.svg', category: 'Tech', siteName: 'YouTube' });
    expect(items([video, { ...video, id: 'v2' }]).map((i) => i.id)).toEqual(['video_abcdEFGH123', 'video_v2']);
    expect(items({ items: [{ ...video, url: 'https://vimeo.com/123' }] })[0].id).toMatch(/^video_u[0-9a-f]{16}$/);
  });

  it('keeps good entries when one is bad, with a clear error for the bad one', () => {
    const entries = videoEntriesFromJson([video, { description: 'no title', url: 'https://x.test/v' }, 42, { title: 'no id nor url' }]);
    expect(entries.map((e) => ('error' in e ? e.error.code : 'ok'))).toEqual(['ok', 'ERR_INVALID_CONTENT', 'ERR_INVALID_CONTENT', 'ERR_INVALID_CONTENT']);
    expect('error' in entries[1] && entries[1].error.message).toMatch(/title/);
    expect('error' in entries[3] && entries[3].error.message).toMatch(/id or a url/);
  });

  it('refuses documents of no known shape', () => {
    expect(() => videoEntriesFromJson('hello')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_CONTENT' }));
    expect(() => videoEntriesFromJson({ foo: 1 })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_CONTENT' }));
  });

  it('rejects bad fields through validation', () => {
    const [e] = videoEntriesFromJson({ ...video, publishedAt: 'yesterday' });
    expect(() => validateItem('item' in e ? e.item : null, opts)).toThrow(/publishedAt/);
    const [bad] = videoEntriesFromJson({ ...video, thumbnail: 'javascript:alert(1)' });
    expect(() => validateItem('item' in bad ? bad.item : null, opts)).toThrow(/thumbnail/);
  });

  it('finds YouTube ids in the usual URL forms', () => {
    expect(youtubeIdFromUrl('https://www.youtube.com/watch?v=D-lhorsDlUQ&t=3')).toBe('D-lhorsDlUQ');
    expect(youtubeIdFromUrl('https://youtu.be/D-lhorsDlUQ')).toBe('D-lhorsDlUQ');
    expect(youtubeIdFromUrl('https://www.youtube.com/embed/D-lhorsDlUQ')).toBe('D-lhorsDlUQ');
    expect(youtubeIdFromUrl('https://www.youtube.com/shorts/D-lhorsDlUQ')).toBe('D-lhorsDlUQ');
    expect(youtubeIdFromUrl('https://example.com/watch?v=D-lhorsDlUQ')).toBeNull();
  });
});

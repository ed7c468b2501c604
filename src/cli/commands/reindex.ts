/**
 * `salon reindex`: re-embeds every chunk with the configured embedder, rebuilds the vector index
 * (and the HNSW graph above HNSW_THRESHOLD, saved to DATA_DIR) and records the embedder, which
 * clears ERR_INDEX_MODEL_MISMATCH after a change of model. Run it with the server stopped.
 */
import { loadConfig } from '../../config.js';
import { openCliSearch } from '../../search/cli-stack.js';
import { SearchIndex } from '../../search/search-index.js';
import { ProgressBar } from '../progress.js';
import { parseArgs, type Command } from '../command.js';

const reindex: Command = {
  summary: 're-embed every chunk with the configured embedder and rebuild the vector index',
  usage: 'reindex [--verbose]',
  flags: ['verbose'],
  async run(args) {
    const { options } = parseArgs(args, ['verbose']);
    const config = loadConfig();
    const opened = openCliSearch(config, 'auto', options.has('verbose'));
    try {
      const { indexer, index } = opened.stack;
      const bar = new ProgressBar('reindex', 0);
      await indexer.reindex(bar);
      bar.finish(`(${index.size} vectors)`);
      if (index instanceof SearchIndex && index.size > config.HNSW_THRESHOLD) {
        console.error(`building the HNSW graph of ${index.size} vectors…`);
        await index.settled();
        await index.save();
      }
      if (indexer.pending > 0) {
        console.error(`salon reindex: ${indexer.pending} chunks could not be embedded; check the AI provider (salon doctor) and run reindex again`);
        return 1;
      }
      return 0;
    } finally {
      await opened.close();
    }
  },
};
export default reindex;

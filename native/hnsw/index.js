'use strict';
// The compiled binding (node-gyp builds it at `npm install`). Exported by name so that ESM code
// can `import { Graph } from 'salon-hnsw'`.
const binding = require('./build/Release/salon_hnsw.node');
exports.Graph = binding.Graph;
exports.scanTop = binding.scanTop;
exports.scanFloor = binding.scanFloor;
exports.countSketch = binding.countSketch;
exports.dotRows = binding.dotRows;
exports.scanKernel = binding.scanKernel;
exports.backgroundThread = binding.backgroundThread;
exports.backgroundThreads = binding.backgroundThreads;
exports.hugePages = binding.hugePages;

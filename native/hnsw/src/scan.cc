// The flat index's exact scan (src/search/flat/), native: the rows live in the index's shared
// WebAssembly memory (a SharedArrayBuffer every scan worker sees), and each worker hands this code
// a view of it, so no vector is ever copied. One call scores a range (or a list) of rows, applies
// the filter from each row's metadata and keeps the top k, the same contract as the WebAssembly
// kernel plus workers/search-scan.ts's loop around it.
//
// Why native: the WebAssembly kernel is 128-bit SIMD, about half of what one AVX2 core reads, so
// the two scan workers together read what one C core reads (issue 17). With AVX2 and FMA (chosen
// at run time) the scan streams at the memory's speed; without them the portable loop below runs
// and the workers prefer the WebAssembly kernel (see `scanKernel`).
#include "scan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SALON_SCAN_X86 1
#endif

namespace salon {
namespace {

// Row layout (src/search/flat/layout.ts): `padded` floats of vector, then four int32 words.
constexpr int kMetaFlags = 0;
constexpr int kMetaScope = 1;
constexpr int kMetaRowId = 2;
constexpr uint32_t kKindMask = 0xf;
constexpr int kSourceShift = 4;
constexpr uint32_t kPrivilegedBit = 1u << 8;

struct Filter {
  uint32_t kindMask = 0;  // 0: any kind
  int32_t source = -1;    // -1: any source
  bool includePrivileged = true;
  bool anyScope = true;
  const int32_t* scopes = nullptr;  // sorted, when !anyScope (may be empty: no scope passes)
  size_t scopeCount = 0;

  bool Pass(const int32_t* meta) const {
    const uint32_t flags = static_cast<uint32_t>(meta[kMetaFlags]);
    if (kindMask != 0 && (kindMask & (1u << (flags & kKindMask))) == 0) return false;
    if (source >= 0 && static_cast<int32_t>((flags >> kSourceShift) & 0x3) != source) return false;
    if (!includePrivileged && (flags & kPrivilegedBit) != 0) return false;
    return anyScope || std::binary_search(scopes, scopes + scopeCount, meta[kMetaScope]);
  }
};

// The k best (score, id) pairs: a min-heap whose root is the weakest kept. `Below` is the order of
// src/search/flat/top-k.ts (lower score, or the same score and a larger id), so both kernels keep
// the same rows.
class TopK {
 public:
  explicit TopK(size_t k) : k_(k) { heap_.reserve(k); }

  float Floor() const { return heap_.size() < k_ ? -INFINITY : heap_[0].score; }

  void Push(float score, int32_t id) {
    if (heap_.size() < k_) {
      heap_.push_back({score, id});
      std::push_heap(heap_.begin(), heap_.end(), Above);
    } else if (Below(heap_[0], {score, id})) {
      std::pop_heap(heap_.begin(), heap_.end(), Above);
      heap_.back() = {score, id};
      std::push_heap(heap_.begin(), heap_.end(), Above);
    }
  }

  size_t Write(int32_t* ids, float* scores) {
    std::sort(heap_.begin(), heap_.end(), Above);
    for (size_t i = 0; i < heap_.size(); i++) {
      ids[i] = heap_[i].id;
      scores[i] = heap_[i].score;
    }
    return heap_.size();
  }

 private:
  struct Entry {
    float score;
    int32_t id;
  };
  static bool Below(const Entry& a, const Entry& b) { return a.score < b.score || (a.score == b.score && a.id > b.id); }
  // std heap functions keep the greatest element first; with this order that is the weakest.
  static bool Above(const Entry& a, const Entry& b) { return Below(b, a); }

  size_t k_;
  std::vector<Entry> heap_;
};

// The portable dot product, 16 lanes of partial sums: compilers vectorise it for the target's
// baseline (SSE2 on x86-64, NEON on arm64).
float DotPortable(const float* q, const float* r, size_t padded) {
  float acc[16] = {0};
  for (size_t i = 0; i < padded; i += 16)
    for (int l = 0; l < 16; l++) acc[l] += q[i + l] * r[i + l];
  float s = 0;
  for (int l = 0; l < 16; l++) s += acc[l];
  return s;
}

#ifdef SALON_SCAN_X86
__attribute__((target("avx2"))) inline float Lanes(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) float DotAvx2(const float* q, const float* r, size_t padded) {
  __m256 a = _mm256_setzero_ps(), b = _mm256_setzero_ps();
  for (size_t i = 0; i < padded; i += 16) {
    a = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(r + i), a);
    b = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), _mm256_loadu_ps(r + i + 8), b);
  }
  return Lanes(_mm256_add_ps(a, b));
}
#endif

bool HasAvx2Fma() {
#ifdef SALON_SCAN_X86
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

struct Kernel {
  float (*dot)(const float*, const float*, size_t);
};

Kernel PickKernel(bool portable) {
#ifdef SALON_SCAN_X86
  if (!portable && HasAvx2Fma()) return {DotAvx2};
#endif
  return {DotPortable};
}

// Where the rows are: the memory view plus the layout numbers every call carries.
struct Rows {
  const uint8_t* base;  // the memory
  size_t bytes;         // its length
  size_t rowsBase;      // byte offset of row 0
  size_t stride;        // bytes per row
  size_t padded;        // floats of vector per row
  size_t count;         // whole rows (with their metadata) between rowsBase and the memory's end
  const float* Vector(size_t row) const { return reinterpret_cast<const float*>(base + rowsBase + row * stride); }
  const int32_t* Meta(size_t row) const { return reinterpret_cast<const int32_t*>(Vector(row) + padded); }
};

// Scores `n` rows (the i-th at rowAt(i)), keeps the top k of those passing the filter. One row at a
// time: scoring four rows per pass (sharing the query loads, as the WebAssembly kernel does) read
// 100K x 768 rows ~40 % slower here, four streams defeating the hardware prefetcher. Listed rows
// are not sequential, so the next one is prefetched while this one is scored.
template <typename RowAt>
void ScoreInto(const Kernel& kernel, const Rows& rows, const float* q, size_t n, RowAt rowAt, bool listed, const Filter& filter, TopK& top) {
  for (size_t i = 0; i < n; i++) {
    const size_t id = rowAt(i);
#ifdef SALON_SCAN_X86
    if (listed && i + 1 < n) {
      const char* next = reinterpret_cast<const char*>(rows.Vector(rowAt(i + 1)));
      for (size_t b = 0; b < rows.padded * 4; b += 64) _mm_prefetch(next + b, _MM_HINT_T0);
    }
#endif
    const float score = kernel.dot(q, rows.Vector(id), rows.padded);
    if (score < top.Floor()) continue;
    const int32_t* meta = rows.Meta(id);
    if (filter.Pass(meta)) top.Push(score, meta[kMetaRowId]);
  }
}

// --- argument reading ---------------------------------------------------------------------------

bool Fail(Napi::Env env, const char* message) {
  Napi::TypeError::New(env, message).ThrowAsJavaScriptException();
  return false;
}

bool RangeFail(Napi::Env env, const char* message) {
  Napi::RangeError::New(env, message).ThrowAsJavaScriptException();
  return false;
}

// A whole number in [0, 2^53) from an object's property.
bool ReadSize(Napi::Env env, const Napi::Object& spec, const char* name, size_t* out) {
  const Napi::Value v = spec.Get(name);
  if (!v.IsNumber()) return Fail(env, name);
  const double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d < 9007199254740992.0) || d != std::floor(d)) return RangeFail(env, name);
  *out = static_cast<size_t>(d);
  return true;
}

bool ReadRows(Napi::Env env, const Napi::Value& memory, const Napi::Object& spec, Rows* rows) {
  if (!memory.IsTypedArray()) return Fail(env, "memory must be a typed array over the index memory");
  // napi_get_typedarray_info gives the data of a view over a SharedArrayBuffer too, which
  // napi_get_arraybuffer_info (behind TypedArray::ArrayBuffer().Data()) refuses on Node 20.
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  if (napi_get_typedarray_info(env, memory, &type, &length, &data, nullptr, nullptr) != napi_ok) return Fail(env, "memory");
  rows->base = static_cast<const uint8_t*>(data);
  rows->bytes = memory.As<Napi::TypedArray>().ByteLength();
  size_t d16 = 0;
  if (!ReadSize(env, spec, "rowsBase", &rows->rowsBase) || !ReadSize(env, spec, "stride", &rows->stride) || !ReadSize(env, spec, "d16", &d16)) return false;
  rows->padded = d16 * 16;
  if (d16 == 0 || rows->stride < rows->padded * 4 + 16 || rows->stride % 4 != 0 || rows->rowsBase % 4 != 0) return RangeFail(env, "layout");
  rows->count = rows->bytes >= rows->rowsBase ? (rows->bytes - rows->rowsBase) / rows->stride : 0;
  return true;
}

// Row r (and its metadata) lies inside the memory. Compared with the rows that fit, divided out once
// a call (ReadRows): (r + 1) x stride wrapped past 2^64 for a row and a stride of up to 2^53 each, and
// passed; a division here was a 64-bit divide for every row a call lists (scanTop's rows, dotRows'
// queries and candidates), which the compiler cannot hoist past the check before it.
bool RowInside(const Rows& rows, size_t r) { return r < rows.count; }

bool ReadQuery(Napi::Env env, const Napi::Object& spec, const Rows& rows, const float** q) {
  size_t offset = 0;
  if (!ReadSize(env, spec, "q", &offset)) return false;
  if (offset % 4 != 0 || offset + rows.padded * 4 > rows.bytes) return RangeFail(env, "q");
  *q = reinterpret_cast<const float*>(rows.base + offset);
  return true;
}

bool ReadFilter(Napi::Env env, const Napi::Object& spec, Filter* filter, std::vector<int32_t>* scopes) {
  size_t kindMask = 0;
  if (!ReadSize(env, spec, "kindMask", &kindMask)) return false;
  filter->kindMask = static_cast<uint32_t>(kindMask);
  const Napi::Value source = spec.Get("source");
  if (!source.IsNumber()) return Fail(env, "source");
  filter->source = source.As<Napi::Number>().Int32Value();
  filter->includePrivileged = spec.Get("includePrivileged").ToBoolean();
  const Napi::Value list = spec.Get("scopes");
  if (list.IsNull() || list.IsUndefined()) return true;
  if (!list.IsTypedArray() || list.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) return Fail(env, "scopes must be an Int32Array");
  const Napi::Int32Array ints = list.As<Napi::Int32Array>();
  scopes->assign(ints.Data(), ints.Data() + ints.ElementLength());
  std::sort(scopes->begin(), scopes->end());
  filter->anyScope = false;
  filter->scopes = scopes->data();
  filter->scopeCount = scopes->size();
  return true;
}

// scanTop(memory, spec, outIds, outScores, portable?) → hits written, best first.
// spec: {q, rowsBase, stride, d16, k, kindMask, source, includePrivileged, scopes,
//        start, end | rows: Int32Array of row slots}.
Napi::Value ScanTop(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[1].IsObject() || !info[2].IsTypedArray() || !info[3].IsTypedArray()) {
    Fail(env, "scanTop(memory, spec, outIds, outScores, portable?)");
    return env.Undefined();
  }
  const Napi::Object spec = info[1].As<Napi::Object>();
  Rows rows;
  const float* q = nullptr;
  Filter filter;
  std::vector<int32_t> scopes;
  size_t k = 0;
  if (!ReadRows(env, info[0], spec, &rows) || !ReadQuery(env, spec, rows, &q) || !ReadFilter(env, spec, &filter, &scopes) || !ReadSize(env, spec, "k", &k)) return env.Undefined();
  if (info[2].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
    Fail(env, "outIds must be an Int32Array and outScores a Float32Array");
    return env.Undefined();
  }
  Napi::Int32Array idsView = info[2].As<Napi::Int32Array>();
  Napi::Float32Array scoresView = info[3].As<Napi::Float32Array>();
  if (k == 0 || idsView.ElementLength() < k || scoresView.ElementLength() < k) {
    RangeFail(env, "k must be at least 1 and fit the out arrays");
    return env.Undefined();
  }
  const Kernel kernel = PickKernel(info.Length() > 4 && info[4].ToBoolean());
  TopK top(k);
  const Napi::Value list = spec.Get("rows");
  if (list.IsTypedArray()) {
    if (list.As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
      Fail(env, "rows must be an Int32Array");
      return env.Undefined();
    }
    const Napi::Int32Array slots = list.As<Napi::Int32Array>();
    const int32_t* data = slots.Data();
    const size_t n = slots.ElementLength();
    for (size_t i = 0; i < n; i++) {
      if (data[i] < 0 || !RowInside(rows, static_cast<size_t>(data[i]))) {
        RangeFail(env, "rows");
        return env.Undefined();
      }
    }
    ScoreInto(kernel, rows, q, n, [data](size_t i) { return static_cast<size_t>(data[i]); }, true, filter, top);
  } else {
    size_t start = 0, end = 0;
    if (!ReadSize(env, spec, "start", &start) || !ReadSize(env, spec, "end", &end)) return env.Undefined();
    if (end < start || (end > start && !RowInside(rows, end - 1))) {
      RangeFail(env, "start/end");
      return env.Undefined();
    }
    ScoreInto(kernel, rows, q, end - start, [start](size_t i) { return start + i; }, false, filter, top);
  }
  const size_t written = top.Write(idsView.Data(), scoresView.Data());
  return Napi::Number::New(env, static_cast<double>(written));
}

// scanFloor(memory, spec, threads) → {ms, best}: the benchmark's floor, not a search path. A plain
// AVX2/FMA loop (one row at a time, no filter, no top k: only the best score, so the loop is not
// optimised away) over rows [0, n) on `threads` threads, timed inside, thread start included.
Napi::Value ScanFloor(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[1].IsObject() || !info[2].IsNumber()) {
    Fail(env, "scanFloor(memory, spec, threads)");
    return env.Undefined();
  }
  const Napi::Object spec = info[1].As<Napi::Object>();
  Rows rows;
  const float* q = nullptr;
  size_t n = 0;
  if (!ReadRows(env, info[0], spec, &rows) || !ReadQuery(env, spec, rows, &q) || !ReadSize(env, spec, "n", &n)) return env.Undefined();
  if (n > 0 && !RowInside(rows, n - 1)) {
    RangeFail(env, "n");
    return env.Undefined();
  }
  const int threads = std::max(1, std::min(64, info[2].As<Napi::Number>().Int32Value()));
  const Kernel kernel = PickKernel(false);
  std::vector<float> best(threads, -INFINITY);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; t++) {
    pool.emplace_back([&, t] {
      const size_t from = n * t / threads, to = n * (t + 1) / threads;
      float b = -INFINITY;
      for (size_t r = from; r < to; r++) b = std::max(b, kernel.dot(q, rows.Vector(r), rows.padded));
      best[t] = b;
    });
  }
  for (auto& th : pool) th.join();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  Napi::Object out = Napi::Object::New(env);
  out.Set("ms", ms);
  out.Set("best", *std::max_element(best.begin(), best.end()));
  return out;
}

// dotRows(memory, spec {rowsBase, stride, d16}, queries: Int32Array, offsets: Int32Array,
// candidates: Int32Array, out: Float32Array): for each query slot queries[i], out[j] = the dot
// product of its row with the row of candidates[j], for j in [offsets[i], offsets[i + 1]). The rows
// are stored normalised, so these are cosines: fusion's exact scores of every chunk of B against
// its candidates in A, in one call rather than one rescoring per chunk.
Napi::Value DotRows(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto typed = [&](size_t i, napi_typedarray_type type) {
    return info.Length() > i && info[i].IsTypedArray() && info[i].As<Napi::TypedArray>().TypedArrayType() == type;
  };
  if (info.Length() < 6 || !info[1].IsObject() || !typed(2, napi_int32_array) || !typed(3, napi_int32_array) || !typed(4, napi_int32_array) ||
      !typed(5, napi_float32_array)) {
    Fail(env, "dotRows(memory, spec, queries: Int32Array, offsets: Int32Array, candidates: Int32Array, out: Float32Array)");
    return env.Undefined();
  }
  Rows rows;
  if (!ReadRows(env, info[0], info[1].As<Napi::Object>(), &rows)) return env.Undefined();
  const Napi::Int32Array queries = info[2].As<Napi::Int32Array>();
  const Napi::Int32Array offsets = info[3].As<Napi::Int32Array>();
  const Napi::Int32Array candidates = info[4].As<Napi::Int32Array>();
  Napi::Float32Array out = info[5].As<Napi::Float32Array>();
  const size_t n = queries.ElementLength();
  const int32_t* q = queries.Data();
  const int32_t* off = offsets.Data();
  const int32_t* c = candidates.Data();
  const size_t total = candidates.ElementLength();
  const auto slot = [&](int32_t r) { return r >= 0 && RowInside(rows, static_cast<size_t>(r)); };
  if (offsets.ElementLength() != n + 1 || off[0] != 0 || static_cast<size_t>(off[n]) != total || out.ElementLength() < total) {
    RangeFail(env, "dotRows: offsets must run from 0 to the number of candidates, one more than the queries, and out must hold them all");
    return env.Undefined();
  }
  for (size_t i = 0; i < n; i++) {
    if (!slot(q[i]) || off[i + 1] < off[i]) {
      RangeFail(env, "dotRows: queries and offsets");
      return env.Undefined();
    }
  }
  for (size_t j = 0; j < total; j++) {
    if (!slot(c[j])) {
      RangeFail(env, "dotRows: candidates");
      return env.Undefined();
    }
  }
  const Kernel kernel = PickKernel(false);
  float* o = out.Data();
  for (size_t i = 0; i < n; i++) {
    const float* query = rows.Vector(static_cast<size_t>(q[i]));
    for (int32_t j = off[i]; j < off[i + 1]; j++) o[j] = kernel.dot(query, rows.Vector(static_cast<size_t>(c[j])), rows.padded);
  }
  return env.Undefined();
}

// countSketch(vectors: Float32Array (n x dim), buckets: Uint16Array (dim), signs: Float32Array (dim),
// out: Float32Array (n x outDims)): out row r = the signed count sketch of vector r, element i
// added with signs[i] into out[buckets[i]] (fusion's scratch graphs, neighbours.ts).
Napi::Value CountSketch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const auto typed = [&](size_t i, napi_typedarray_type type) {
    return info.Length() > i && info[i].IsTypedArray() && info[i].As<Napi::TypedArray>().TypedArrayType() == type;
  };
  if (!typed(0, napi_float32_array) || !typed(1, napi_uint16_array) || !typed(2, napi_float32_array) || !typed(3, napi_float32_array)) {
    Fail(env, "countSketch(vectors: Float32Array, buckets: Uint16Array, signs: Float32Array, out: Float32Array)");
    return env.Undefined();
  }
  const Napi::Float32Array vectors = info[0].As<Napi::Float32Array>();
  const Napi::Uint16Array buckets = info[1].As<Napi::Uint16Array>();
  const Napi::Float32Array signs = info[2].As<Napi::Float32Array>();
  Napi::Float32Array out = info[3].As<Napi::Float32Array>();
  const size_t dim = buckets.ElementLength();
  if (dim == 0 || signs.ElementLength() != dim || vectors.ElementLength() % dim != 0) {
    RangeFail(env, "countSketch: one bucket and one sign per dimension, and whole vectors");
    return env.Undefined();
  }
  const size_t n = vectors.ElementLength() / dim;
  if (n == 0) return env.Undefined();
  const size_t out_dims = out.ElementLength() / n;
  if (out_dims == 0 || out.ElementLength() != n * out_dims) {
    RangeFail(env, "countSketch: out must hold the same whole number of elements per vector");
    return env.Undefined();
  }
  const uint16_t* bucket = buckets.Data();
  for (size_t i = 0; i < dim; i++) {
    if (bucket[i] >= out_dims) {
      RangeFail(env, "countSketch: buckets must be below the sketch's length");
      return env.Undefined();
    }
  }
  const float* in = vectors.Data();
  const float* sign = signs.Data();
  float* o = out.Data();
  std::fill(o, o + n * out_dims, 0.0f);
  for (size_t r = 0; r < n; r++) {
    const float* v = in + r * dim;
    float* row = o + r * out_dims;
    for (size_t i = 0; i < dim; i++) row[bucket[i]] += sign[i] * v[i];
  }
  return env.Undefined();
}

}  // namespace

Napi::Object InitScan(Napi::Env env, Napi::Object exports) {
  exports.Set("scanTop", Napi::Function::New(env, ScanTop, "scanTop"));
  exports.Set("scanFloor", Napi::Function::New(env, ScanFloor, "scanFloor"));
  exports.Set("countSketch", Napi::Function::New(env, CountSketch, "countSketch"));
  exports.Set("dotRows", Napi::Function::New(env, DotRows, "dotRows"));
  exports.Set("scanKernel", Napi::String::New(env, HasAvx2Fma() ? "avx2" : "portable"));
  return exports;
}

}  // namespace salon

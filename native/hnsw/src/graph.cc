// Salon's binding of hnswlib (0.8.0, vendored in ../vendor), for cosine similarity over
// L2-normalised float32 vectors. It exists for two things hnswlib-node 3 cannot do:
//  - take a Float32Array as it is: hnswlib-node reads a query element by element from a JS array
//    (~0.06 ms per 768-d query, ~0.15 ms at 2048), more than the graph search itself;
//  - build one graph on several threads: hnswlib's addPoint is thread-safe, but hnswlib-node calls
//    it from the JS thread only, so one 100K x 768 graph took ~107 s on one core.
// Files are hnswlib's own format (the same as hnswlib-node's writeIndex/readIndex).
#include <napi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <limits>
#include <mutex>
#include <queue>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "hnswlib/hnswlib.h"
#include "pages.h"
#include "scan.h"
#include "thread.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SALON_X86 1
#endif

namespace {

// Throws an `E` saying `message` unless an exception is pending already: a node-addon-api call
// that failed (napi_typeof, napi_get_typedarray_info, a string's or a promise's creation) threw
// one, the call went on, and its own throw then made napi_throw fail (napi_pending_exception),
// which node-addon-api takes as fatal (NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS hid it). Each call
// into the binding throws at most once; the first error is the one JS sees.
template <typename E>
void ThrowOnce(Napi::Env env, const std::string& message) {
  if (env.IsExceptionPending()) return;
  E::New(env, message).ThrowAsJavaScriptException();
}

using Index = hnswlib::HierarchicalNSW<float>;

void Normalize(const float* in, float* out, size_t dim) {
  double sum = 0;
  for (size_t i = 0; i < dim; i++) sum += static_cast<double>(in[i]) * in[i];
  const float scale = sum > 0 ? static_cast<float>(1.0 / std::sqrt(sum)) : 1.0f;
  for (size_t i = 0; i < dim; i++) out[i] = in[i] * scale;
}

#ifdef SALON_X86
// The sum of every lane of four 8-lane accumulators.
__attribute__((target("avx2"))) inline float SumLanes(__m256 s0, __m256 s1, __m256 s2, __m256 s3) {
  const __m256 sum8 = _mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3));
  __m128 sum4 = _mm_add_ps(_mm256_castps256_ps128(sum8), _mm256_extractf128_ps(sum8, 1));
  sum4 = _mm_add_ps(sum4, _mm_movehl_ps(sum4, sum4));
  sum4 = _mm_add_ss(sum4, _mm_shuffle_ps(sum4, sum4, 1));
  return _mm_cvtss_f32(sum4);
}

// 1 - dot(a, b) with AVX2 and FMA, chosen at run time: hnswlib-node's build enables only SSE
// (hnswlib picks AVX at compile time), and most distance time goes into this loop.
__attribute__((target("avx2,fma"))) float InnerDistanceAvx2(const void* a, const void* b, const void* qty) {
  const float* x = static_cast<const float*>(a);
  const float* y = static_cast<const float*>(b);
  const size_t n = *static_cast<const size_t*>(qty);
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
    s1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), s1);
    s2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), s2);
    s3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), s0);
  float dot = SumLanes(s0, s1, s2, s3);
  for (; i < n; i++) dot += x[i] * y[i];
  return 1.0f - dot;
}
#endif

// IEEE half precision, rounded to nearest even (software, for CPUs without F16C and for tests).
uint16_t FloatToHalf(float value) {
  uint32_t f;
  std::memcpy(&f, &value, 4);
  const uint32_t sign = (f >> 16) & 0x8000;
  const int32_t exponent = static_cast<int32_t>((f >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = f & 0x7fffff;
  if (((f >> 23) & 0xff) == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mantissa ? 0x200 : 0));
  if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (exponent <= 0) {
    if (exponent < -10) return static_cast<uint16_t>(sign);
    mantissa |= 0x800000;
    const uint32_t shift = static_cast<uint32_t>(14 - exponent);
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) half++;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++;
  return static_cast<uint16_t>(half);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t f;
  if (exponent == 0) {
    if (mantissa == 0) {
      f = sign;
    } else {
      exponent = 127 - 15 + 1;
      while (!(mantissa & 0x400)) {
        mantissa <<= 1;
        exponent--;
      }
      f = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
    }
  } else if (exponent == 31) {
    f = sign | 0x7f800000 | (mantissa << 13);
  } else {
    f = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &f, 4);
  return value;
}

float HalfDistance(const void* a, const void* b, const void* qty) {
  const uint16_t* x = static_cast<const uint16_t*>(a);
  const uint16_t* y = static_cast<const uint16_t*>(b);
  const size_t n = *static_cast<const size_t*>(qty);
  float dot = 0;
  for (size_t i = 0; i < n; i++) dot += HalfToFloat(x[i]) * HalfToFloat(y[i]);
  return 1.0f - dot;
}

#ifdef SALON_X86
__attribute__((target("avx2,fma,f16c"))) inline __m256 LoadHalves(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

__attribute__((target("avx2,fma,f16c"))) float HalfDistanceAvx2(const void* a, const void* b, const void* qty) {
  const uint16_t* x = static_cast<const uint16_t*>(a);
  const uint16_t* y = static_cast<const uint16_t*>(b);
  const size_t n = *static_cast<const size_t*>(qty);
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_fmadd_ps(LoadHalves(x + i), LoadHalves(y + i), s0);
    s1 = _mm256_fmadd_ps(LoadHalves(x + i + 8), LoadHalves(y + i + 8), s1);
    s2 = _mm256_fmadd_ps(LoadHalves(x + i + 16), LoadHalves(y + i + 16), s2);
    s3 = _mm256_fmadd_ps(LoadHalves(x + i + 24), LoadHalves(y + i + 24), s3);
  }
  for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(LoadHalves(x + i), LoadHalves(y + i), s0);
  float dot = SumLanes(s0, s1, s2, s3);
  for (; i < n; i++) dot += HalfToFloat(x[i]) * HalfToFloat(y[i]);
  return 1.0f - dot;
}

__attribute__((target("avx2,f16c"))) void EncodeHalvesF16c(const float* in, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; i++) out[i] = FloatToHalf(in[i]);
}
#endif

// Eight-bit elements: a unit vector as a float scale followed by `dim` signed bytes in -127..127,
// element = byte * scale. A quarter of float32's bytes: a search reads half of what half floats take.
constexpr size_t kInt8ScaleBytes = sizeof(float);

float Int8Scale(const void* v) {
  float scale;
  std::memcpy(&scale, v, sizeof(float));
  return scale;
}

float Int8Distance(const void* a, const void* b, const void* qty) {
  const int8_t* x = static_cast<const int8_t*>(a) + kInt8ScaleBytes;
  const int8_t* y = static_cast<const int8_t*>(b) + kInt8ScaleBytes;
  const size_t n = *static_cast<const size_t*>(qty);
  int64_t dot = 0;
  for (size_t i = 0; i < n; i++) dot += static_cast<int32_t>(x[i]) * y[i];
  return 1.0f - static_cast<float>(dot) * Int8Scale(a) * Int8Scale(b);
}

#ifdef SALON_X86
// Signed bytes times signed bytes with maddubs (unsigned x signed): |x| times y with x's sign moved
// onto y. Bytes stay within -127..127, so a pair sum (at most 2 * 127 * 127) never saturates int16.
__attribute__((target("avx2"))) inline __m256i DotBytes(__m256i x, __m256i y) {
  const __m256i pairs = _mm256_maddubs_epi16(_mm256_abs_epi8(x), _mm256_sign_epi8(y, x));
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
}

__attribute__((target("avx2"))) float Int8DistanceAvx2(const void* a, const void* b, const void* qty) {
  const int8_t* x = static_cast<const int8_t*>(a) + kInt8ScaleBytes;
  const int8_t* y = static_cast<const int8_t*>(b) + kInt8ScaleBytes;
  const size_t n = *static_cast<const size_t*>(qty);
  __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    s0 = _mm256_add_epi32(s0, DotBytes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)),
                                       _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + i))));
    s1 = _mm256_add_epi32(s1, DotBytes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i + 32)),
                                       _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + i + 32))));
  }
  for (; i + 32 <= n; i += 32) {
    s0 = _mm256_add_epi32(s0, DotBytes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)),
                                       _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + i))));
  }
  const __m256i sum8 = _mm256_add_epi32(s0, s1);
  __m128i sum4 = _mm_add_epi32(_mm256_castsi256_si128(sum8), _mm256_extracti128_si256(sum8, 1));
  sum4 = _mm_add_epi32(sum4, _mm_shuffle_epi32(sum4, _MM_SHUFFLE(1, 0, 3, 2)));
  sum4 = _mm_add_epi32(sum4, _mm_shuffle_epi32(sum4, _MM_SHUFFLE(2, 3, 0, 1)));
  int64_t dot = _mm_cvtsi128_si32(sum4);
  for (; i < n; i++) dot += static_cast<int32_t>(x[i]) * y[i];
  return 1.0f - static_cast<float>(dot) * Int8Scale(a) * Int8Scale(b);
}
#endif

// Writes `unit` as a scale and signed bytes: the largest magnitude maps to 127.
void EncodeInt8(const float* unit, uint8_t* out, size_t n) {
  float largest = 0;
  for (size_t i = 0; i < n; i++) largest = std::max(largest, std::fabs(unit[i]));
  const float scale = largest > 0 ? largest / 127.0f : 1.0f;
  std::memcpy(out, &scale, sizeof(float));
  int8_t* bytes = reinterpret_cast<int8_t*>(out + kInt8ScaleBytes);
  const float inverse = 1.0f / scale;
  for (size_t i = 0; i < n; i++) {
    const float q = std::nearbyint(unit[i] * inverse);
    bytes[i] = static_cast<int8_t>(std::max(-127.0f, std::min(127.0f, q)));
  }
}

// SALON_HNSW_SCALAR (any value) makes graphs created from then on use the portable code, as on
// CPUs without AVX2 (ARM laptops): it lets tests cover those paths on this machine.
bool ScalarForced() { return std::getenv("SALON_HNSW_SCALAR") != nullptr; }

bool HasAvx2Fma() {
#ifdef SALON_X86
  return !ScalarForced() && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

bool HasF16c() {
#ifdef SALON_X86
  return HasAvx2Fma() && __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

// How vectors are stored in the graph. Graph search is bound by memory traffic (at 2048 dimensions
// half floats measured ~2x faster than float32), so fewer bytes per element search faster: half
// precision costs scores about 1e-3, eight bits about 1e-2; the caller rescores exactly.
enum class Encoding { F32, F16, I8 };

const char* NameOf(Encoding encoding) {
  switch (encoding) {
    case Encoding::F16: return "f16";
    case Encoding::I8: return "i8";
    default: return "f32";
  }
}

// hnswlib's inner-product space over unit vectors stored as `encoding`, with the fastest distance
// function this CPU runs.
class UnitCosineSpace : public hnswlib::SpaceInterface<float> {
 public:
  UnitCosineSpace(size_t dim, Encoding encoding) : fallback_(dim), dim_(dim), encoding_(encoding), f16c_(HasF16c()) {
    if (encoding == Encoding::F16) {
      distance_ = HalfDistance;
#ifdef SALON_X86
      if (f16c_) distance_ = HalfDistanceAvx2;
#endif
    } else if (encoding == Encoding::I8) {
      distance_ = Int8Distance;
#ifdef SALON_X86
      if (HasAvx2Fma()) distance_ = Int8DistanceAvx2;
#endif
    } else {
      distance_ = fallback_.get_dist_func();
#ifdef SALON_X86
      if (HasAvx2Fma()) distance_ = InnerDistanceAvx2;
#endif
    }
  }
  size_t get_data_size() override {
    switch (encoding_) {
      case Encoding::F16: return dim_ * sizeof(uint16_t);
      case Encoding::I8: return kInt8ScaleBytes + dim_;
      default: return dim_ * sizeof(float);
    }
  }
  hnswlib::DISTFUNC<float> get_dist_func() override { return distance_; }
  void* get_dist_func_param() override { return &dim_; }
  Encoding encoding() const { return encoding_; }

  // Normalises `in` and writes it in the stored encoding to `out` (get_data_size() bytes).
  void Encode(const float* in, std::vector<float>& unit, std::vector<uint8_t>& out) const {
    unit.resize(dim_);
    Normalize(in, unit.data(), dim_);
    if (encoding_ == Encoding::F32) {
      out.resize(dim_ * sizeof(float));
      std::memcpy(out.data(), unit.data(), dim_ * sizeof(float));
      return;
    }
    if (encoding_ == Encoding::I8) {
      out.resize(kInt8ScaleBytes + dim_);
      return EncodeInt8(unit.data(), out.data(), dim_);
    }
    out.resize(dim_ * sizeof(uint16_t));
    uint16_t* halves = reinterpret_cast<uint16_t*>(out.data());
#ifdef SALON_X86
    if (f16c_) return EncodeHalvesF16c(unit.data(), halves, dim_);
#endif
    for (size_t i = 0; i < dim_; i++) halves[i] = FloatToHalf(unit[i]);
  }

 private:
  hnswlib::InnerProductSpace fallback_;
  size_t dim_;
  Encoding encoding_;
  // Whether F16C converts halves (read once: encoding and distance must agree for a graph's life).
  bool f16c_;
  hnswlib::DISTFUNC<float> distance_;
};

// "f32", "f16" (the default) or "i8" from an optional JS argument; false when it is something else.
bool ParseEncoding(const Napi::Value& value, Encoding* out) {
  if (value.IsUndefined()) {
    *out = Encoding::F16;
    return true;
  }
  if (!value.IsString()) return false;
  const std::string name = value.As<Napi::String>().Utf8Value();
  if (name == "f16") *out = Encoding::F16;
  else if (name == "f32") *out = Encoding::F32;
  else if (name == "i8") *out = Encoding::I8;
  else return false;
  return true;
}

// How long a search waits for a link list an insert holds before it looks at other points first.
constexpr auto kLinkWait = std::chrono::microseconds(200);

// The links of `node` at `level`, copied out under the lock an insert takes to change them. An
// insert holds its new point's lock until it is linked (milliseconds at 2,048 dimensions), and a
// neighbour's only while it rewrites that list. With `patient` false, a lock still held after
// kLinkWait returns false and copies nothing, so the caller can go on elsewhere and come back;
// with `patient` true it waits for the lock.
bool CopyLinks(Index& index, hnswlib::tableint node, int level, std::vector<hnswlib::tableint>& out, bool patient) {
  std::unique_lock<std::mutex> lock(index.link_list_locks_[node], std::try_to_lock);
  if (!lock.owns_lock()) {
    const auto until = std::chrono::steady_clock::now() + kLinkWait;
    while (!lock.try_lock()) {
      if (std::chrono::steady_clock::now() >= until) {
        if (!patient) {
          out.clear();
          return false;
        }
        lock.lock();
        break;
      }
      std::this_thread::yield();
    }
  }
  hnswlib::linklistsizeint* list = level == 0 ? index.get_linklist0(node) : index.get_linklist(node, level);
  const size_t n = index.getListCount(list);
  const hnswlib::tableint* links = reinterpret_cast<const hnswlib::tableint*>(list + 1);
  out.assign(links, links + n);
  return true;
}

// searchKnn for a graph that points are being added to on another thread (addPointsAsync).
// hnswlib's own search reads link lists without locks, for speed, so it must not run beside an
// insert; this one reads every list under the lock an insert takes to change it (as hnswlib's
// insert-time search does), and the entry point and top level under `global`, which an insert
// raising the top level holds until it is linked. A point still being inserted may not be found
// yet: the caller scores the rows it is adding exactly. Deleted points are skipped, as searchKnn
// skips them; nothing is deleted or resized while an add runs (Graph refuses both).
//
// A list held past kLinkWait is never taken for "no links": that cut a search short of points
// linked long before (a point reached only through a busy neighbour was lost). The greedy descent
// steps to the nearest point it can read and keeps the busy ones for level 0; there a busy point
// is set aside while the others are expanded and looked at again, waited for only when nothing
// else within the bound is left — so a search waits for an insert only when its answer runs
// through the point being linked, and then only for that insert's last step.
std::priority_queue<std::pair<float, hnswlib::labeltype>> LockedSearch(Index& index, const void* query, size_t k) {
  using hnswlib::tableint;
  using Pair = std::pair<float, tableint>;
  std::priority_queue<std::pair<float, hnswlib::labeltype>> result;
  tableint current;
  int top;
  {
    // An insert that raised the top level let go of its point before `global`: the entry is readable.
    std::unique_lock<std::mutex> lock(index.global);
    current = index.enterpoint_node_;
    top = index.maxlevel_;
  }
  if (top < 0 || current >= index.max_elements_) return result;
  auto distance = [&](tableint id) { return index.fstdistfunc_(query, index.getDataByInternalId(id), index.dist_func_param_); };
  std::vector<tableint> links, next;
  std::vector<Pair> closer;
  // Points of the descent whose lists an insert held (points being linked): looked at again at level 0.
  std::vector<Pair> skipped;
  float best = distance(current);
  for (int level = top; level > 0; level--) {
    // `current` has been read before, so its own insert is over: whatever holds its lock now is a
    // neighbour's rewrite, soon done.
    CopyLinks(index, current, level, links, true);
    for (bool changed = true; changed;) {
      changed = false;
      closer.clear();
      for (tableint c : links) {
        const float d = distance(c);
        if (d < best) closer.emplace_back(d, c);
      }
      std::sort(closer.begin(), closer.end());
      // The nearest whose list can be read now; the descent never stands on a point being linked
      // (its insert holds it through every level below), so it never waits for one.
      for (const Pair& p : closer) {
        if (CopyLinks(index, p.second, level, next, false)) {
          best = p.first;
          current = p.second;
          links.swap(next);
          changed = true;
          break;
        }
        skipped.push_back(p);
      }
    }
  }
  const size_t ef = std::max(index.ef_, k);
  struct Farther {
    bool operator()(const Pair& a, const Pair& b) const { return a.first < b.first; }
  };
  std::priority_queue<Pair, std::vector<Pair>, Farther> found;       // the ef nearest so far, farthest on top
  std::priority_queue<Pair, std::vector<Pair>, Farther> candidates;  // to expand, nearest on top (negated)
  std::vector<Pair> deferred;                                        // (distance, point) whose list was busy
  hnswlib::VisitedList* visited = index.visited_list_pool_->getFreeVisitedList();
  const hnswlib::vl_type tag = visited->curV;
  visited->mass[current] = tag;
  float bound = best;
  if (!index.isMarkedDeleted(current)) found.emplace(best, current);
  else bound = std::numeric_limits<float>::max();
  candidates.emplace(-best, current);
  for (const Pair& p : skipped) {
    if (visited->mass[p.second] == tag) continue;
    visited->mass[p.second] = tag;
    if (!index.isMarkedDeleted(p.second)) found.emplace(p.first, p.second);
    if (found.size() > ef) found.pop();
    deferred.push_back(p);
  }
  if (!found.empty()) bound = found.top().first;
  auto expand = [&]() {
    for (size_t i = 0; i < links.size(); i++) {
      const tableint c = links[i];
      // The next neighbour's whole vector is fetched while this one is scored (vendor/README.md).
      if (i + 1 < links.size()) index.prefetchVector(links[i + 1]);
      if (visited->mass[c] == tag) continue;
      visited->mass[c] = tag;
      const float d = distance(c);
      if (found.size() < ef || d < bound) {
        candidates.emplace(-d, c);
        if (!index.isMarkedDeleted(c)) found.emplace(d, c);
        if (found.size() > ef) found.pop();
        if (!found.empty()) bound = found.top().first;
      }
    }
  };
  // Whether a point at distance p.first may still improve `found` (hnswlib's stopping rule).
  auto within = [&](const Pair& p) { return p.first <= bound || found.size() < ef; };
  std::vector<Pair> waiting;
  for (;;) {
    while (!candidates.empty()) {
      const Pair nearest{-candidates.top().first, candidates.top().second};
      if (!within(nearest)) break;
      candidates.pop();
      if (CopyLinks(index, nearest.second, 0, links, false)) expand();
      else deferred.push_back(nearest);
    }
    // Points set aside that are still within the bound: those free now are expanded; if none is,
    // the nearest is waited for (an insert linking it at level 0, the end of its insert). What they
    // add to the candidates is searched on as before.
    waiting.clear();
    waiting.swap(deferred);
    std::sort(waiting.begin(), waiting.end());
    bool resumed = false;
    for (const Pair& p : waiting) {
      if (!within(p)) continue;
      if (CopyLinks(index, p.second, 0, links, false)) {
        expand();
        resumed = true;
      } else {
        deferred.push_back(p);
      }
    }
    if (!resumed && !deferred.empty()) {
      const Pair waited = deferred.front();  // the nearest left: `waiting` was sorted
      deferred.erase(deferred.begin());
      CopyLinks(index, waited.second, 0, links, true);
      expand();
      resumed = true;
    }
    if (!resumed) break;
  }
  index.visited_list_pool_->releaseVisitedList(visited);
  while (found.size() > k) found.pop();
  for (; !found.empty(); found.pop()) result.emplace(found.top().first, index.getExternalLabel(found.top().second));
  return result;
}

// A graph search: LockedSearch while points are being added on another thread, hnswlib's own otherwise.
std::priority_queue<std::pair<float, hnswlib::labeltype>> SearchKnn(Index& index, const void* query, size_t k, bool adding) {
  return adding ? LockedSearch(index, query, k) : index.searchKnn(query, k);
}

// Runs fn(row) for rows [0, n) on `threads` threads; the first exception stops the others and is rethrown.
// With `idle`, the threads it starts put themselves in SCHED_IDLE first (the calling thread is left as it is).
// No more threads than rows are started, and a thread that cannot be started (no memory for its stack,
// the system's thread limit) leaves its rows to those that were, or to the calling thread when none
// was: the exception of a failed start left the loop with threads running, and destroying a running
// std::thread is std::terminate, which aborted the whole process.
template <typename Fn>
void ParallelFor(size_t n, size_t threads, Fn fn, bool idle = false) {
  threads = std::min(threads, n);
  if (threads <= 1) {
    for (size_t row = 0; row < n; row++) fn(row);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr failure = nullptr;
  std::mutex failure_lock;
  auto work = [&] {
    while (true) {
      const size_t row = next.fetch_add(1);
      if (row >= n) break;
      try {
        fn(row);
      } catch (...) {
        std::lock_guard<std::mutex> guard(failure_lock);
        if (!failure) failure = std::current_exception();
        next = n;
        break;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (size_t t = 0; t < threads; t++) {
    try {
      pool.emplace_back([&] {
        if (idle) salon::IdleCallingThread();
        work();
      });
    } catch (const std::system_error&) {
      break;
    }
  }
  if (pool.empty()) work();
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

class Graph : public Napi::ObjectWrap<Graph> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports) {
    Napi::Function fn = DefineClass(env, "Graph",
                                    {
                                        InstanceMethod("addPoints", &Graph::AddPoints),
                                        InstanceMethod("addPointsAsync", &Graph::AddPointsAsync),
                                        InstanceMethod("search", &Graph::Search),
                                        InstanceMethod("searchMany", &Graph::SearchMany),
                                        InstanceMethod("markDelete", &Graph::MarkDelete),
                                        InstanceMethod("resize", &Graph::Resize),
                                        InstanceMethod("setEf", &Graph::SetEf),
                                        InstanceMethod("write", &Graph::Write),
                                        InstanceMethod("writeSync", &Graph::WriteSync),
                                        InstanceAccessor("count", &Graph::Count, nullptr),
                                        InstanceAccessor("capacity", &Graph::Capacity, nullptr),
                                        InstanceAccessor("dimensions", &Graph::Dimensions, nullptr),
                                        InstanceAccessor("encoding", &Graph::EncodingName, nullptr),
                                        StaticMethod("read", &Graph::Read),
                                    });
    // Per environment (the main thread and each worker thread load the addon separately).
    env.SetInstanceData<Napi::FunctionReference>(new Napi::FunctionReference(Napi::Persistent(fn)));
    exports.Set("Graph", fn);
    return exports;
  }

  // new Graph(dimensions, capacity, m, efConstruction, seed, encoding?), or new Graph(dimensions, null, encoding?) for read().
  explicit Graph(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Graph>(info) {
    Napi::Env env = info.Env();
    // Each a whole number in [min, 2^32): Uint32Value took dimensions of 2^32 as 0 (the first add's
    // length check then divided by zero: SIGFPE, the process gone), and with m = 1 hnswlib draws
    // levels scaled by 1 / log(1), so every add failed with "Not enough memory".
    uint32_t dim;
    if (!Uint32Arg(env, info[0], "Graph: dimensions", &dim, 1)) return;
    dim_ = dim;
    const bool forRead = info.Length() >= 2 && info[1].IsNull();
    Encoding encoding;
    if (!ParseEncoding(info[forRead ? 2 : 5], &encoding)) {
      ThrowOnce<Napi::TypeError>(env, "Graph: encoding must be \"f16\", \"f32\" or \"i8\"");
      return;
    }
    uint32_t capacity, m, ef_construction, seed;
    if (!forRead &&
        (!Uint32Arg(env, info[1], "Graph: capacity", &capacity, 1) || !Uint32Arg(env, info[2], "Graph: m", &m, 2) ||
         !Uint32Arg(env, info[3], "Graph: efConstruction", &ef_construction, 1) || !Uint32Arg(env, info[4], "Graph: seed", &seed, 0)))
      return;
    space_ = std::make_unique<UnitCosineSpace>(dim_, encoding);
    if (forRead) return;
    try {
      index_ = std::make_unique<Index>(space_.get(), capacity, m, ef_construction, seed);
      AdviseLevel0();
    } catch (const std::exception& e) {
      ThrowOnce<Napi::Error>(env, std::string("hnswlib: ") + e.what());
    }
  }

  // The level-0 block (every element's vector and links: nearly all of a graph's memory) in huge
  // pages: a build writes hundreds of MB into memory never touched, a page fault every 4 KB else.
  void AdviseLevel0() { salon::AdviseHugePages(index_->data_level0_memory_, index_->max_elements_ * index_->size_data_per_element_); }

  // hnswlib's resize, whose new block is advised again (realloc may have moved it).
  void Grow(size_t elements) {
    index_->resizeIndex(elements);
    AdviseLevel0();
  }

  size_t dim_ = 0;
  std::unique_ptr<UnitCosineSpace> space_;
  std::unique_ptr<Index> index_;
  // Set while write() runs on the thread pool: changes then would race the writer.
  std::atomic<int> writers_{0};
  // Set while addPointsAsync() links points on the thread pool: another change is refused until it
  // is done, and searches meanwhile take LockedSearch (hnswlib's own search must not run beside an
  // insert).
  std::atomic<int> adders_{0};
  // The query, normalised and encoded (searches run on the JS thread only).
  std::vector<float> unit_;
  std::vector<uint8_t> encoded_;

 private:
  bool Ready(Napi::Env env, bool mutating) {
    if (!index_) {
      ThrowOnce<Napi::Error>(env, "Graph: not initialised");
      return false;
    }
    if (mutating && writers_.load() > 0) {
      ThrowOnce<Napi::Error>(env, "Graph: cannot change the graph while it is being written");
      return false;
    }
    // Searches go on beside an add (LockedSearch); changes wait for it.
    if (mutating && adders_.load() > 0) {
      ThrowOnce<Napi::Error>(env, "Graph: cannot change the graph while points are being added");
      return false;
    }
    return true;
  }

  // A whole number in [0, 2^32) (a label, a capacity); otherwise a TypeError or RangeError naming
  // `what` is thrown and false returned. Uint32Value takes a number modulo 2^32, and a non-number
  // as 0 with its error left pending while the call went on: markDelete(2^32 + 7) deleted label 7,
  // markDelete("7") label 0, and resize(2^32 + 20) made the graph's capacity 20.
  static bool Uint32Arg(Napi::Env env, const Napi::Value& value, const char* what, uint32_t* out, uint32_t min = 0) {
    if (!value.IsNumber()) {
      ThrowOnce<Napi::TypeError>(env, std::string(what) + " must be a number");
      return false;
    }
    const double d = value.As<Napi::Number>().DoubleValue();
    if (env.IsExceptionPending()) return false;  // the number could not be read
    if (!(d >= min && d <= 4294967295.0) || d != std::floor(d)) {
      ThrowOnce<Napi::RangeError>(env, std::string(what) + " must be a whole number in [" + std::to_string(min) + ", 2^32)");
      return false;
    }
    *out = static_cast<uint32_t>(d);
    return true;
  }

  bool Vector(Napi::Env env, const Napi::Value& value, size_t rows_multiple, Napi::Float32Array* out) {
    if (!value.IsTypedArray() || value.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
      ThrowOnce<Napi::TypeError>(env, "Graph: vectors must be a Float32Array");
      return false;
    }
    *out = value.As<Napi::Float32Array>();
    if (out->ElementLength() % dim_ != 0 || (rows_multiple == 1 && out->ElementLength() != dim_)) {
      ThrowOnce<Napi::RangeError>(env, "Graph: vector length must be a multiple of " + std::to_string(dim_));
      return false;
    }
    return !env.IsExceptionPending();
  }

  // The rows of an add: vectors (n x dim) in info[0], one label each in info[1].
  bool Rows(Napi::Env env, const Napi::CallbackInfo& info, Napi::Float32Array* vectors, const uint32_t** label_data, size_t* n) {
    if (!Vector(env, info[0], 0, vectors)) return false;
    if (!info[1].IsTypedArray() || (info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array &&
                                    info[1].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array)) {
      ThrowOnce<Napi::TypeError>(env, "Graph: labels must be an Int32Array or Uint32Array");
      return false;
    }
    Napi::TypedArray labels = info[1].As<Napi::TypedArray>();
    *n = vectors->ElementLength() / dim_;
    if (labels.ElementLength() != *n) {
      ThrowOnce<Napi::RangeError>(env, "Graph: one label per vector");
      return false;
    }
    // napi_get_typedarray_info gives the data of a view over a SharedArrayBuffer too; ArrayBuffer().Data()
    // (napi_get_arraybuffer_info) refuses one on Node 20 and gave null, and the add read its labels there (a segfault).
    napi_typedarray_type type;
    size_t length = 0;
    void* data = nullptr;
    if (napi_get_typedarray_info(env, info[1], &type, &length, &data, nullptr, nullptr) != napi_ok || (data == nullptr && *n > 0)) {
      ThrowOnce<Napi::TypeError>(env, "Graph: labels could not be read");
      return false;
    }
    *label_data = static_cast<const uint32_t*>(data);
    return !env.IsExceptionPending();
  }

  // addPoints(vectors: Float32Array (n x dim), labels: Uint32Array|Int32Array (n), threads, idle?): adds
  // or replaces each row under its label. Grows the graph first when it is too small. With `idle`, the
  // threads it starts run in SCHED_IDLE.
  Napi::Value AddPoints(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Ready(env, true)) return env.Undefined();
    Napi::Float32Array vectors;
    const uint32_t* label_data;
    size_t n;
    if (!Rows(env, info, &vectors, &label_data, &n)) return env.Undefined();
    const size_t threads = info[2].IsNumber() ? std::max<int64_t>(1, info[2].As<Napi::Number>().Int64Value()) : 1;
    const bool idle = info[3].IsBoolean() && info[3].As<Napi::Boolean>().Value();
    // An argument that could not be read has thrown: nothing is added.
    if (env.IsExceptionPending()) return env.Undefined();
    const float* data = vectors.Data();
    try {
      const size_t needed = index_->getCurrentElementCount() + n;
      if (needed > index_->max_elements_) Grow(std::max(needed, index_->max_elements_ + index_->max_elements_ / 2));
      Index* index = index_.get();
      const size_t dim = dim_;
      // The first point is added alone: hnswlib needs an entry point before concurrent inserts help.
      const UnitCosineSpace* space = space_.get();
      auto add = [&](size_t row) {
        thread_local std::vector<float> unit;
        thread_local std::vector<uint8_t> encoded;
        space->Encode(data + row * dim, unit, encoded);
        index->addPoint(encoded.data(), label_data[row]);
      };
      size_t start = 0;
      if (index->getCurrentElementCount() == 0 && n > 0) add(start++);
      ParallelFor(n - start, threads, [&](size_t row) { add(start + row); }, idle);
    } catch (const std::exception& e) {
      ThrowOnce<Napi::Error>(env, std::string("hnswlib: ") + e.what());
    }
    return env.Undefined();
  }

  // search(query: Float32Array (dim), k, labels: Uint32Array, distances: Float32Array): number of
  // hits written, nearest first; distance = 1 - cosine.
  Napi::Value Search(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Ready(env, false)) return env.Undefined();
    Napi::Float32Array query;
    if (!Vector(env, info[0], 1, &query)) return env.Undefined();
    if (!info[1].IsNumber() || !info[2].IsTypedArray() || !info[3].IsTypedArray() ||
        info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array ||
        info[3].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) {
      ThrowOnce<Napi::TypeError>(env, "Graph: search(query, k, Uint32Array, Float32Array)");
      return env.Undefined();
    }
    Napi::Uint32Array out_labels = info[2].As<Napi::Uint32Array>();
    Napi::Float32Array out_distances = info[3].As<Napi::Float32Array>();
    const size_t k = std::min<size_t>({static_cast<size_t>(std::max<int64_t>(0, info[1].As<Napi::Number>().Int64Value())),
                                       out_labels.ElementLength(), out_distances.ElementLength()});
    if (env.IsExceptionPending()) return env.Undefined();
    if (k == 0 || index_->getCurrentElementCount() == 0) return Napi::Number::New(env, 0);
    space_->Encode(query.Data(), unit_, encoded_);
    try {
      auto found = SearchKnn(*index_, encoded_.data(), k, adders_.load() > 0);
      const size_t hits = found.size();
      for (size_t i = hits; i-- > 0;) {
        out_labels[i] = static_cast<uint32_t>(found.top().second);
        out_distances[i] = found.top().first;
        found.pop();
      }
      return Napi::Number::New(env, static_cast<double>(hits));
    } catch (const std::exception& e) {
      ThrowOnce<Napi::Error>(env, std::string("hnswlib: ") + e.what());
      return env.Undefined();
    }
  }

  // searchMany(queries: Float32Array (n x dim), k, labels: Uint32Array (n x k), distances:
  // Float32Array (n x k), counts: Uint32Array (n), threads): search() for each query, on `threads`
  // threads (hnswlib searches are safe to run side by side); query i's hits fill row i of the out
  // arrays, nearest first, and counts[i] says how many. Blocks until all are done.
  Napi::Value SearchMany(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Ready(env, false)) return env.Undefined();
    Napi::Float32Array queries;
    if (!Vector(env, info[0], 0, &queries)) return env.Undefined();
    if (!info[1].IsNumber() || !info[2].IsTypedArray() || !info[3].IsTypedArray() || !info[4].IsTypedArray() ||
        info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array ||
        info[3].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array ||
        info[4].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array) {
      ThrowOnce<Napi::TypeError>(env, "Graph: searchMany(queries, k, Uint32Array, Float32Array, Uint32Array, threads)");
      return env.Undefined();
    }
    const size_t n = queries.ElementLength() / dim_;
    const size_t k = static_cast<size_t>(std::max<int64_t>(0, info[1].As<Napi::Number>().Int64Value()));
    Napi::Uint32Array out_labels = info[2].As<Napi::Uint32Array>();
    Napi::Float32Array out_distances = info[3].As<Napi::Float32Array>();
    Napi::Uint32Array counts = info[4].As<Napi::Uint32Array>();
    // k compared with each array's share per query: n x k wrapped past 2^64 for a huge k (8 x 2^61 is
    // 0), passed, and query i's hits were then written at i x k, far outside the arrays.
    const auto fits = [&](size_t length) { return n == 0 || k <= length / n; };
    if (!fits(out_labels.ElementLength()) || !fits(out_distances.ElementLength()) || counts.ElementLength() < n) {
      ThrowOnce<Napi::RangeError>(env, "Graph: searchMany needs n x k labels and distances and n counts");
      return env.Undefined();
    }
    const size_t threads = info[5].IsNumber() ? std::max<int64_t>(1, info[5].As<Napi::Number>().Int64Value()) : 1;
    if (env.IsExceptionPending()) return env.Undefined();
    const float* data = queries.Data();
    uint32_t* labels = out_labels.Data();
    float* distances = out_distances.Data();
    uint32_t* count = counts.Data();
    Index* index = index_.get();
    const UnitCosineSpace* space = space_.get();
    const size_t dim = dim_;
    // Adds start on this thread only, so none starts while these searches run.
    const bool adding = adders_.load() > 0;
    try {
      ParallelFor(n, threads, [&](size_t row) {
        count[row] = 0;
        if (k == 0 || index->getCurrentElementCount() == 0) return;
        thread_local std::vector<float> unit;
        thread_local std::vector<uint8_t> encoded;
        space->Encode(data + row * dim, unit, encoded);
        auto found = SearchKnn(*index, encoded.data(), k, adding);
        const size_t hits = found.size();
        for (size_t i = hits; i-- > 0;) {
          labels[row * k + i] = static_cast<uint32_t>(found.top().second);
          distances[row * k + i] = found.top().first;
          found.pop();
        }
        count[row] = static_cast<uint32_t>(hits);
      });
    } catch (const std::exception& e) {
      ThrowOnce<Napi::Error>(env, std::string("hnswlib: ") + e.what());
    }
    return env.Undefined();
  }

  // markDelete(label): true if the label was in the graph and is now deleted.
  Napi::Value MarkDelete(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Ready(env, true)) return env.Undefined();
    uint32_t label;
    if (!Uint32Arg(env, info[0], "Graph: markDelete(label): label", &label)) return env.Undefined();
    try {
      index_->markDelete(label);
      return Napi::Boolean::New(env, true);
    } catch (const std::exception&) {
      return Napi::Boolean::New(env, false);  // not in the graph, or deleted already
    }
  }

  Napi::Value Resize(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Ready(env, true)) return env.Undefined();
    uint32_t capacity;
    if (!Uint32Arg(env, info[0], "Graph: resize(capacity): capacity", &capacity)) return env.Undefined();
    try {
      Grow(capacity);
    } catch (const std::exception& e) {
      ThrowOnce<Napi::Error>(env, std::string("hnswlib: ") + e.what());
    }
    return env.Undefined();
  }

  Napi::Value SetEf(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Ready(env, false)) return env.Undefined();
    if (!info[0].IsNumber()) {
      ThrowOnce<Napi::TypeError>(env, "Graph: setEf(ef): ef must be a number");
      return env.Undefined();
    }
    const int64_t ef = info[0].As<Napi::Number>().Int64Value();
    if (env.IsExceptionPending()) return env.Undefined();
    index_->setEf(std::max<int64_t>(1, ef));
    return env.Undefined();
  }

  Napi::Value Count(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), index_ ? static_cast<double>(index_->getCurrentElementCount()) : 0);
  }
  Napi::Value Capacity(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), index_ ? static_cast<double>(index_->max_elements_) : 0);
  }
  Napi::Value Dimensions(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), static_cast<double>(dim_)); }
  Napi::Value EncodingName(const Napi::CallbackInfo& info) {
    return Napi::String::New(info.Env(), NameOf(space_->encoding()));
  }

  Napi::Value WriteSync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!Ready(env, true)) return env.Undefined();
    if (!info[0].IsString()) {
      ThrowOnce<Napi::TypeError>(env, "Graph: writeSync(path)");
      return env.Undefined();
    }
    const std::string path = info[0].As<Napi::String>().Utf8Value();
    if (env.IsExceptionPending()) return env.Undefined();
    try {
      index_->saveIndex(path);
    } catch (const std::exception& e) {
      ThrowOnce<Napi::Error>(env, std::string("hnswlib: ") + e.what());
    }
    return env.Undefined();
  }

  // addPointsAsync(vectors: Float32Array (n x dim), labels: Uint32Array|Int32Array (n), threads?): Promise<void>.
  // addPoints run from a thread of the libuv pool (on `threads` threads, default 1), so the event
  // loop goes on meanwhile (an insert into a graph of 10,000 × 2,048 takes milliseconds). The rows
  // are copied first and the graph grown here; until the promise settles searches go on beside the
  // add (LockedSearch) and every change is refused.
  Napi::Value AddPointsAsync(const Napi::CallbackInfo& info);
  // write(path): Promise<void>, written on the libuv thread pool. Searches may go on meanwhile
  // (both only read); changes are refused until it is done.
  Napi::Value Write(const Napi::CallbackInfo& info);
  // Graph.read(path, dimensions): Promise<Graph>, read on the libuv thread pool.
  static Napi::Value Read(const Napi::CallbackInfo& info);
};

// A graph operation on the libuv pool: it keeps the graph alive, raises `running` (which makes the
// graph refuse conflicting calls) until it is done, and settles a promise.
class GraphTask : public Napi::AsyncWorker {
 public:
  GraphTask(Napi::Env env, Graph* graph, Napi::Object holder, std::atomic<int>& running)
      : Napi::AsyncWorker(env), graph_(graph), deferred_(Napi::Promise::Deferred::New(env)), running_(running) {
    running_++;
    holder_ = Napi::Persistent(holder);
  }
  Napi::Promise Promise() { return deferred_.Promise(); }
  void Execute() override {
    try {
      Run();
    } catch (const std::exception& e) {
      SetError(std::string("hnswlib: ") + e.what());
    }
  }
  void OnOK() override {
    running_--;
    deferred_.Resolve(Env().Undefined());
  }
  void OnError(const Napi::Error& e) override {
    running_--;
    deferred_.Reject(e.Value());
  }

 protected:
  virtual void Run() = 0;
  Graph* graph_;

 private:
  Napi::Promise::Deferred deferred_;
  std::atomic<int>& running_;
  Napi::ObjectReference holder_;
};

class AddWorker : public GraphTask {
 public:
  AddWorker(Napi::Env env, Graph* graph, Napi::Object holder, std::vector<float> vectors, std::vector<uint32_t> labels, size_t threads)
      : GraphTask(env, graph, holder, graph->adders_), vectors_(std::move(vectors)), labels_(std::move(labels)), threads_(threads) {}

 protected:
  void Run() override {
    Index* index = graph_->index_.get();
    const size_t n = labels_.size();
    const UnitCosineSpace* space = graph_->space_.get();
    const size_t dim = graph_->dim_;
    auto add = [&](size_t row) {
      thread_local std::vector<float> unit;
      thread_local std::vector<uint8_t> encoded;
      space->Encode(vectors_.data() + row * dim, unit, encoded);
      index->addPoint(encoded.data(), labels_[row]);
    };
    // As in addPoints: the first point alone, so that concurrent inserts have an entry point.
    size_t start = 0;
    if (index->getCurrentElementCount() == 0 && n > 0) add(start++);
    ParallelFor(n - start, threads_, [&](size_t row) { add(start + row); });
  }

 private:
  std::vector<float> vectors_;
  std::vector<uint32_t> labels_;
  size_t threads_;
};

Napi::Value Graph::AddPointsAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Ready(env, true)) return env.Undefined();
  Napi::Float32Array vectors;
  const uint32_t* label_data;
  size_t n;
  if (!Rows(env, info, &vectors, &label_data, &n)) return env.Undefined();
  const size_t threads = info[2].IsNumber() ? std::max<int64_t>(1, info[2].As<Napi::Number>().Int64Value()) : 1;
  // The worker's promise would be a second throw (napi_create_promise refuses under a pending exception).
  if (env.IsExceptionPending()) return env.Undefined();
  // Grown here, before the add starts: searches run beside the add, and a resize moves the memory they read.
  try {
    const size_t needed = index_->getCurrentElementCount() + n;
    if (needed > index_->max_elements_) Grow(std::max(needed, index_->max_elements_ + index_->max_elements_ / 2));
  } catch (const std::exception& e) {
    ThrowOnce<Napi::Error>(env, std::string("hnswlib: ") + e.what());
    return env.Undefined();
  }
  auto* worker = new AddWorker(env, this, info.This().As<Napi::Object>(), std::vector<float>(vectors.Data(), vectors.Data() + n * dim_),
                               std::vector<uint32_t>(label_data, label_data + n), threads);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

class WriteWorker : public GraphTask {
 public:
  WriteWorker(Napi::Env env, Graph* graph, Napi::Object holder, std::string path)
      : GraphTask(env, graph, holder, graph->writers_), path_(std::move(path)) {}

 protected:
  void Run() override { graph_->index_->saveIndex(path_); }

 private:
  std::string path_;
};

Napi::Value Graph::Write(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!Ready(env, true)) return env.Undefined();
  if (!info[0].IsString()) {
    ThrowOnce<Napi::TypeError>(env, "Graph: write(path)");
    return env.Undefined();
  }
  std::string path = info[0].As<Napi::String>().Utf8Value();
  if (env.IsExceptionPending()) return env.Undefined();
  auto* worker = new WriteWorker(env, this, info.This().As<Napi::Object>(), std::move(path));
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

class ReadWorker : public Napi::AsyncWorker {
 public:
  ReadWorker(Napi::Env env, Napi::Object holder, Graph* graph, std::string path)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), graph_(graph), path_(std::move(path)) {
    holder_ = Napi::Persistent(holder);
  }
  Napi::Promise Promise() { return deferred_.Promise(); }
  void Execute() override {
    try {
      index_ = std::make_unique<Index>(graph_->space_.get(), path_, false, 0, false);
      // hnswlib lays elements out as the file says and reads and writes `dimensions` of the given
      // encoding in each: a file of fewer bytes per vector (other dimensions, another encoding) was
      // read, and its searches read past each vector and the adds wrote past the last element.
      const size_t wanted = graph_->space_->get_data_size();
      const size_t links = index_->size_links_level0_;
      if (index_->offsetData_ != links || index_->label_offset_ != links + wanted ||
          index_->size_data_per_element_ != links + wanted + sizeof(hnswlib::labeltype)) {
        const size_t held = index_->label_offset_ - index_->offsetData_;
        index_.reset();
        throw std::runtime_error("the file's elements hold " + std::to_string(held) + " bytes of vector, where " + std::to_string(graph_->dim_) +
                                 " dimensions in " + NameOf(graph_->space_->encoding()) + " take " + std::to_string(wanted) +
                                 ": a graph of other dimensions or another encoding");
      }
    } catch (const std::exception& e) {
      SetError(std::string("hnswlib: ") + e.what());
    }
  }
  void OnOK() override {
    graph_->index_ = std::move(index_);
    deferred_.Resolve(holder_.Value());
  }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference holder_;
  Graph* graph_;
  std::string path_;
  std::unique_ptr<Index> index_;
};

Napi::Value Graph::Read(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsNumber()) {
    ThrowOnce<Napi::TypeError>(env, "Graph.read(path, dimensions, encoding?)");
    return env.Undefined();
  }
  Napi::Object holder = env.GetInstanceData<Napi::FunctionReference>()->New({info[1], env.Null(), info[2]});
  if (env.IsExceptionPending()) return env.Undefined();
  Graph* graph = Graph::Unwrap(holder);
  std::string path = info[0].As<Napi::String>().Utf8Value();
  if (env.IsExceptionPending()) return env.Undefined();
  auto* worker = new ReadWorker(env, holder, graph, std::move(path));
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

Napi::Object InitAll(Napi::Env env, Napi::Object exports) {
  return salon::InitPages(env, salon::InitThread(env, salon::InitScan(env, Graph::Init(env, exports))));
}

}  // namespace

NODE_API_MODULE(salon_hnsw, InitAll)

// CUDA on the CPU: the prelude of every translation unit the CPU emulator
// (fitness/emulation/cpu_emulator.hpp) compiles with g++. It is not part of gi's own
// build: gi embeds this file's text at build time (fitness/emulation/
// embed_prelude.cmake) and writes it in front of the kernel source, which is
// followed by a generated launcher (fitness/emulation/emulation_source.cpp).
//
// What it models:
//   - CUDA's keywords (__global__, __device__, __shared__ as `static`: blocks
//     run one after another, so a function-static array is one block's shared
//     memory; it starts every block as NaN words), vector types with CUDA's alignment, threadIdx/blockIdx/
//     blockDim/gridDim, the math functions, bit intrinsics and atomics;
//   - every CUDA thread of a block as a fiber (its own stack) on one OS
//     thread, lanes in order, switching only at barriers and warp
//     collectives, so a run is deterministic;
//   - __syncthreads (and _count/_and/_or): waits for every thread of the block
//     that has not exited; warp collectives (__shfl*_sync, __ballot_sync,
//     __any/__all_sync, __match_any/all_sync, __reduce_*_sync, __syncwarp):
//     wait for the lanes of their mask; a mask that names a lane that has
//     exited (or that exits while others wait for it) is an error, as it
//     is undefined on the GPU (the early return before a full-mask shuffle);
//     __activemask(): the lanes of the warp that reach the same call before
//     any other can go on (the GPU's converged lanes at that instruction;
//     resolved only when no warp collective can complete);
//   - a deadlock (every live thread waits in a barrier nobody else can reach)
//     or a mismatch (lanes of one mask in different collectives) ends the
//     launch with a message naming the block and what each thread waits in.
//   - texture objects over linear memory (tex1Dfetch), as plain loads, and
//     over CUDA arrays (tex1D/tex2D/tex3D): point or linear filtering, clamp
//     or border addressing, normalised coordinates or not; linear weights
//     are rounded to 1/256 as the GPU's 8-bit fractions are;
//   - cooperative groups' reduce over coalesced threads (gi's donors);
// Not modelled: timing, memory ordering between blocks (blocks run in
// order), layered and cubemap textures, surface objects, the rest of cooperative
// groups, half precision, inline PTX other than reads of
// %laneid, %globaltimer and %dynamic_smem_size.
#pragma once

#include <math.h>  // libstdc++'s math.h: C's functions plus C++'s float overloads in the global namespace
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <type_traits>
#include <utility>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

// ---------------------------------------------------------------- keywords
#define __global__
#define __device__
#define __host__
#define __noinline__
#define __forceinline__
// Static shared memory: function-static arrays in one section, which the
// scheduler fills with NaN words at the start of every block (as undefined
// as GPU shared memory, and a read before the write shows in the outputs).
// g++ cannot put statics of inline functions or templates into the same
// section as others ("section type conflict"): the emulator then compiles
// again with GI_EMU_PLAIN_SHARED, and shared memory keeps the previous
// block's values.
#if defined(GI_EMU_PLAIN_SHARED)
#define __shared__ static
#else
#define __shared__ static __attribute__((section("gi_shared")))
#endif
#define __constant__
#define __managed__
#define __grid_constant__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
// __restrict__ is g++'s own.

// ------------------------------------------------------------ vector types
#define GI_EMU_VEC1(T, N, A) \
  struct __attribute__((aligned(A))) N##1 { T x; };
#define GI_EMU_VEC2(T, N, A) \
  struct __attribute__((aligned(A))) N##2 { T x, y; };
#define GI_EMU_VEC3(T, N) \
  struct N##3 { T x, y, z; };
#define GI_EMU_VEC4(T, N, A) \
  struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };
#define GI_EMU_MAKE(T, N)                                                                     \
  inline N##1 make_##N##1(T x) { return N##1{x}; }                                            \
  inline N##2 make_##N##2(T x, T y) { return N##2{x, y}; }                                     \
  inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }                              \
  inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4{x, y, z, w}; }
#define GI_EMU_VECTORS(T, N, S)                                                                 \
  GI_EMU_VEC1(T, N, S) GI_EMU_VEC2(T, N, 2 * S) GI_EMU_VEC3(T, N) GI_EMU_VEC4(T, N, 4 * S)    \
  GI_EMU_MAKE(T, N)
GI_EMU_VECTORS(signed char, char, 1)
GI_EMU_VECTORS(unsigned char, uchar, 1)
GI_EMU_VECTORS(short, short, 2)
GI_EMU_VECTORS(unsigned short, ushort, 2)
GI_EMU_VECTORS(int, int, 4)
GI_EMU_VECTORS(unsigned int, uint, 4)
GI_EMU_VECTORS(float, float, 4)
#undef GI_EMU_VECTORS
#define GI_EMU_VECTORS8(T, N)                                                                  \
  GI_EMU_VEC1(T, N, 8) GI_EMU_VEC2(T, N, 16) GI_EMU_VEC3(T, N) GI_EMU_VEC4(T, N, 16)          \
  GI_EMU_MAKE(T, N)
GI_EMU_VECTORS8(long long, longlong)
GI_EMU_VECTORS8(unsigned long long, ulonglong)
GI_EMU_VECTORS8(double, double)
#undef GI_EMU_VECTORS8
#undef GI_EMU_VEC1
#undef GI_EMU_VEC2
#undef GI_EMU_VEC3
#undef GI_EMU_VEC4
#undef GI_EMU_MAKE

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// ------------------------------------------------------ the runtime's state
namespace gi_emu {

enum class Op : unsigned char {
  None, SyncThreads, SyncCount, SyncAnd, SyncOr,
  SyncWarp, Shfl, ShflUp, ShflDown, ShflXor, Ballot, Any, All, MatchAny, MatchAll,
  ReduceAdd, ReduceMin, ReduceMax, ReduceAnd, ReduceOr, ReduceXor, ActiveMask
};
enum class State : unsigned char { Runnable, WaitBlock, WaitWarp, WaitActive, Done };

struct Fiber {
  void* sp = nullptr;  // saved stack pointer (x86-64) while switched out
#if !defined(__x86_64__)
  ucontext_t context;
#endif
  uint3 tid{};
  unsigned linear = 0, lane = 0, warp = 0;
  State state = State::Runnable;
  Op op = Op::None;
  bool is_signed = false;
  unsigned mask = 0;
  unsigned long long value = 0;
  int arg = 0, width = 32;
  unsigned line = 0;
  unsigned long long result = 0;
  int result2 = 0;
};

inline Fiber* current = nullptr;
inline unsigned long long clock_counter = 0;
inline bool failed = false;  // a fiber hit an error: the scheduler ends the launch
inline char* message = nullptr;
inline size_t message_size = 0;
void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void yield_to_scheduler();
unsigned live_mask(unsigned warp);
const char* op_name(Op op);

// Dynamic shared memory (`extern __shared__ T name[];` is rewritten to a
// pointer here): as much as one block may have on an H100/H200. The
// launch's bytes end where a page no access may touch begins, so a kernel
// that reads or writes past what its launch gives (a spec with too few
// shared_bytes) faults as it does on the GPU, instead of using memory it
// never asked for.
inline constexpr size_t kDynamicSharedCapacity = 232448;
inline unsigned char* dynamic_shared_end() {
  static unsigned char* end = [] {
    const size_t page = 4096, bytes = (kDynamicSharedCapacity + page - 1) / page * page;
    void* p = mmap(nullptr, bytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) abort();
    unsigned char* region = static_cast<unsigned char*>(p);
    mprotect(region + bytes, page, PROT_NONE);
    return region + bytes;
  }();
  return end;
}
inline unsigned char* dynamic_shared = nullptr;  // this launch's bytes: 16-aligned, up to the guard page

}  // namespace gi_emu

inline uint3 threadIdx;
inline uint3 blockIdx;
inline dim3 blockDim;
inline dim3 gridDim;
inline constexpr int warpSize = 32;

// ------------------------------------------------------------------- math
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return powf(10.0f, x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline void __sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : (x == x ? x : 0.0f)); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
inline float __fadd_rz(float a, float b) { return a + b; }
inline float __fmul_rz(float a, float b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __drcp_rn(double a) { return 1.0 / a; }
inline double __dsqrt_rn(double a) { return sqrt(a); }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline float norm3df(float a, float b, float c) { return sqrtf(a * a + b * b + c * c); }
inline float rnorm3df(float a, float b, float c) { return 1.0f / sqrtf(a * a + b * b + c * c); }
inline float rhypotf(float a, float b) { return 1.0f / hypotf(a, b); }
inline double norm3d(double a, double b, double c) { return sqrt(a * a + b * b + c * c); }
inline float saturate(float x) { return __saturatef(x); }

inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
inline int __float2int_rz(float x) { return (int)x; }
inline int __float2int_rd(float x) { return (int)floorf(x); }
inline int __float2int_ru(float x) { return (int)ceilf(x); }
inline unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
inline unsigned __float2uint_rz(float x) { return (unsigned)x; }
inline unsigned __float2uint_rd(float x) { return (unsigned)floorf(x); }
inline unsigned __float2uint_ru(float x) { return (unsigned)ceilf(x); }
inline float __int2float_rn(int x) { return (float)x; }
inline float __uint2float_rn(unsigned x) { return (float)x; }
inline float __double2float_rn(double x) { return (float)x; }
inline int __double2int_rn(double x) { return (int)nearbyint(x); }
inline int __double2int_rz(double x) { return (int)x; }
inline long long __float2ll_rn(float x) { return (long long)nearbyintf(x); }
inline long long __double2ll_rn(double x) { return (long long)nearbyint(x); }

inline int __float_as_int(float x) { int r; __builtin_memcpy(&r, &x, 4); return r; }
inline unsigned __float_as_uint(float x) { unsigned r; __builtin_memcpy(&r, &x, 4); return r; }
inline float __int_as_float(int x) { float r; __builtin_memcpy(&r, &x, 4); return r; }
inline float __uint_as_float(unsigned x) { float r; __builtin_memcpy(&r, &x, 4); return r; }
inline long long __double_as_longlong(double x) { long long r; __builtin_memcpy(&r, &x, 8); return r; }
inline double __longlong_as_double(long long x) { double r; __builtin_memcpy(&r, &x, 8); return r; }
inline int __double2hiint(double x) { return (int)(__double_as_longlong(x) >> 32); }
inline int __double2loint(double x) { return (int)(unsigned)__double_as_longlong(x); }
inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double((long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo));
}

// min/max as CUDA overloads them: the usual arithmetic conversions, and
// fmin/fmax (NaN-dropping) for floating-point operands.
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> min(A a, B b) {
  using T = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<T>) return fmin((T)a, (T)b);
  else return (T)a < (T)b ? (T)a : (T)b;
}
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> max(A a, B b) {
  using T = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<T>) return fmax((T)a, (T)b);
  else return (T)a > (T)b ? (T)a : (T)b;
}
inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long llmin(long long a, long long b) { return a < b ? a : b; }
inline long long llmax(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// ---------------------------------------------------------- bit intrinsics
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}
inline unsigned long long __brevll(unsigned long long x) {
  return ((unsigned long long)__brev((unsigned)x) << 32) | __brev((unsigned)(x >> 32));
}
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  const unsigned long long v = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return r;
}
inline int __mul24(int a, int b) { return (int)((long long)((a << 8) >> 8) * ((b << 8) >> 8)); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xFFFFFFu) * (b & 0xFFFFFFu); }
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline unsigned __sad(int a, int b, unsigned c) { return c + (unsigned)(a > b ? a - b : b - a); }
inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }
inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
inline unsigned __uhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b) >> 1); }
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  const unsigned long long v = ((unsigned long long)hi << 32) | lo;
  return (unsigned)((v << (s & 31)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  const unsigned long long v = ((unsigned long long)hi << 32) | lo;
  return (unsigned)(v >> (s & 31));
}

// ------------------------------------------------------- loads and stores
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }

// Texture objects over linear memory: the launcher passes a texture buffer's
// host address where the GPU runner passes a cudaTextureObject_t, so a fetch
// is a load. Unlike the GPU, an index outside the buffer reads its guard
// words (the GPU returns zeros), which the outputs then show.
typedef unsigned long long cudaTextureObject_t;
template <class T>
inline T tex1Dfetch(cudaTextureObject_t texture, int x) {
  return reinterpret_cast<const T*>(texture)[x];
}
template <class T>
inline void tex1Dfetch(T* value, cudaTextureObject_t texture, int x) {
  *value = tex1Dfetch<T>(texture, x);
}

// Texture objects over CUDA arrays: the launcher passes the address of a
// gi_texture_array (laid out as fitness/emulation/host_buffers.hpp's
// EmulatedTextureArray) where the GPU runner passes a cudaTextureObject_t.
// A texel is 1, 2 or 4 words, float or integer; only float ones filter.
struct gi_texture_array {
  const void* data;
  unsigned long long extent[3];
  unsigned dimensions;
  unsigned filter;   // 0 point, 1 linear
  unsigned address;  // 0 clamp, 1 border
  unsigned normalized;
};
// Texel i of dimension d after addressing, or -1 outside a border texture.
inline long long gi_texel_coordinate(const gi_texture_array* t, unsigned d, long long i) {
  const long long n = (long long)t->extent[d];
  if (i >= 0 && i < n) return i;
  if (t->address == 1) return -1;
  return i < 0 ? 0 : n - 1;
}
template <class T>
inline T gi_texture_fetch(cudaTextureObject_t texture, float x, float y, float z) {
  static_assert(sizeof(T) % 4 == 0 && sizeof(T) <= 16, "a texel is 1, 2 or 4 32-bit words");
  const gi_texture_array* t = reinterpret_cast<const gi_texture_array*>(texture);
  const float at[3] = {x, y, z};
  float position[3] = {0.0f, 0.0f, 0.0f};
  for (unsigned d = 0; d < t->dimensions; ++d)
    position[d] = t->normalized ? at[d] * (float)t->extent[d] : at[d];
  const unsigned words = sizeof(T) / 4;
  // Point: the texel holding the position. Linear: the 2^dimensions texels
  // around it (centres at i + 0.5), weighted by 8-bit fractions.
  long long base[3] = {0, 0, 0};
  float fraction[3] = {0.0f, 0.0f, 0.0f};
  const bool linear = t->filter == 1;
  for (unsigned d = 0; d < t->dimensions; ++d) {
    const float p = linear ? position[d] - 0.5f : position[d];
    base[d] = (long long)floorf(p);
    if (linear) fraction[d] = roundf((p - floorf(p)) * 256.0f) / 256.0f;
  }
  float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  T result;
  __builtin_memset(&result, 0, sizeof result);
  const unsigned corners = linear ? 1u << t->dimensions : 1u;
  for (unsigned corner = 0; corner < corners; ++corner) {
    float weight = 1.0f;
    long long index = 0, stride = 1;
    bool outside = false;
    for (unsigned d = 0; d < t->dimensions; ++d) {
      const unsigned step = (corner >> d) & 1u;
      const long long i = gi_texel_coordinate(t, d, base[d] + step);
      if (i < 0) outside = true;
      index += i * stride;
      stride *= (long long)t->extent[d];
      if (linear) weight *= step ? fraction[d] : 1.0f - fraction[d];
    }
    if (outside) continue;  // a border texel reads zero
    const unsigned char* texel = (const unsigned char*)t->data + index * (long long)sizeof(T);
    if (!linear) {
      __builtin_memcpy(&result, texel, sizeof(T));
      return result;
    }
    for (unsigned w = 0; w < words; ++w) {
      float v;
      __builtin_memcpy(&v, texel + 4 * w, 4);
      sum[w] += weight * v;
    }
  }
  if (linear) __builtin_memcpy(&result, sum, sizeof(T));
  return result;
}
template <class T>
inline T tex1D(cudaTextureObject_t texture, float x) { return gi_texture_fetch<T>(texture, x, 0.0f, 0.0f); }
template <class T>
inline T tex2D(cudaTextureObject_t texture, float x, float y) { return gi_texture_fetch<T>(texture, x, y, 0.0f); }
template <class T>
inline T tex3D(cudaTextureObject_t texture, float x, float y, float z) { return gi_texture_fetch<T>(texture, x, y, z); }
template <class T>
inline void tex1D(T* value, cudaTextureObject_t texture, float x) { *value = tex1D<T>(texture, x); }
template <class T>
inline void tex2D(T* value, cudaTextureObject_t texture, float x, float y) { *value = tex2D<T>(texture, x, y); }
template <class T>
inline void tex3D(T* value, cudaTextureObject_t texture, float x, float y, float z) { *value = tex3D<T>(texture, x, y, z); }

// ---------------------------------------------------------------- atomics
// Threads never run at the same time, so a read-modify-write is atomic.
#define GI_EMU_ATOMIC(NAME, T, EXPR)                                         \
  inline T NAME(T* p, T v) { T old = *p; *p = (EXPR); return old; }          \
  inline T NAME##_block(T* p, T v) { return NAME(p, v); }                    \
  inline T NAME##_system(T* p, T v) { return NAME(p, v); }
#define GI_EMU_ATOMIC_INT(NAME, EXPR)                    \
  GI_EMU_ATOMIC(NAME, int, EXPR)                         \
  GI_EMU_ATOMIC(NAME, unsigned int, EXPR)                \
  GI_EMU_ATOMIC(NAME, unsigned long long, EXPR)          \
  GI_EMU_ATOMIC(NAME, long long, EXPR)
GI_EMU_ATOMIC_INT(atomicAdd, old + v)
GI_EMU_ATOMIC(atomicAdd, float, old + v)
GI_EMU_ATOMIC(atomicAdd, double, old + v)
GI_EMU_ATOMIC_INT(atomicSub, old - v)
GI_EMU_ATOMIC(atomicSub, float, old - v)
GI_EMU_ATOMIC_INT(atomicExch, v)
GI_EMU_ATOMIC(atomicExch, float, v)
GI_EMU_ATOMIC_INT(atomicMin, v < old ? v : old)
GI_EMU_ATOMIC_INT(atomicMax, v > old ? v : old)
GI_EMU_ATOMIC_INT(atomicAnd, old & v)
GI_EMU_ATOMIC_INT(atomicOr, old | v)
GI_EMU_ATOMIC_INT(atomicXor, old ^ v)
GI_EMU_ATOMIC(atomicInc, unsigned int, (old >= v) ? 0u : old + 1u)
GI_EMU_ATOMIC(atomicDec, unsigned int, (old == 0u || old > v) ? v : old - 1u)
#undef GI_EMU_ATOMIC_INT
#undef GI_EMU_ATOMIC
#define GI_EMU_CAS(T)                                                                            \
  inline T atomicCAS(T* p, T compare, T v) { T old = *p; if (old == compare) *p = v; return old; } \
  inline T atomicCAS_block(T* p, T compare, T v) { return atomicCAS(p, compare, v); }              \
  inline T atomicCAS_system(T* p, T compare, T v) { return atomicCAS(p, compare, v); }
GI_EMU_CAS(int)
GI_EMU_CAS(unsigned int)
GI_EMU_CAS(unsigned long long)
GI_EMU_CAS(unsigned short)
#undef GI_EMU_CAS

// ------------------------------------------------------------- the clocks
inline long long clock64() { return (long long)(gi_emu::clock_counter += 4); }
inline long long clock() { return clock64(); }
inline unsigned long long gi_emu_globaltimer() { return gi_emu::clock_counter += 4; }
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}
inline void __nanosleep(unsigned) {}
inline void __trap() { __builtin_trap(); }
inline void __brkpt() { __builtin_trap(); }
inline unsigned gi_emu_laneid() { return gi_emu::current->lane; }
namespace gi_emu {
inline size_t dynamic_shared_size = 0;  // the launch's dynamic shared memory in bytes
}
inline unsigned gi_emu_dynamic_smem_size() { return (unsigned)gi_emu::dynamic_shared_size; }

// ---------------------------------------------- barriers and warp collectives
namespace gi_emu {

inline unsigned long long block_barrier(Op op, int predicate, unsigned line) {
  Fiber& f = *current;
  f.op = op;
  f.value = predicate != 0;
  f.line = line;
  f.state = State::WaitBlock;
  yield_to_scheduler();
  return f.result;
}

// Computes a collective whose only live lane is the caller (no waiting).
unsigned long long alone(Fiber& f);
// Lanes of the warp that existed in this block and have exited.
unsigned exited_lanes(unsigned warp);

inline unsigned long long warp_collective(Op op, unsigned mask, unsigned long long value, int arg, int width,
                                          bool is_signed, unsigned line) {
  Fiber& f = *current;
  f.op = op;
  f.mask = mask;
  f.value = value;
  f.arg = arg;
  f.width = width;
  f.is_signed = is_signed;
  f.line = line;
  f.result2 = 0;
  if (!((mask >> f.lane) & 1u)) {
    fail("%s at line %u: thread (%u,%u,%u) (lane %u) calls it with mask 0x%08x, which lacks its own lane",
         op_name(op), line, f.tid.x, f.tid.y, f.tid.z, f.lane, mask);
    yield_to_scheduler();
  }
  if (const unsigned gone = mask & exited_lanes(f.warp)) {
    fail("%s at line %u: thread (%u,%u,%u) (lane %u) calls it with mask 0x%08x, which names lanes 0x%08x that "
         "have exited (undefined on the GPU: make the early return a predicate)",
         op_name(op), line, f.tid.x, f.tid.y, f.tid.z, f.lane, mask, gone);
    yield_to_scheduler();
  }
  if (width <= 0 || width > 32 || (width & (width - 1)) != 0) {
    fail("%s at line %u: width %d is not a power of two up to 32", op_name(op), line, width);
    yield_to_scheduler();
  }
  if ((mask & live_mask(f.warp)) == (1u << f.lane)) return alone(f);
  f.state = State::WaitWarp;
  yield_to_scheduler();
  return f.result;
}

template <class T>
inline unsigned long long bits_of(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "warp collectives take values of up to 8 bytes");
  unsigned long long b = 0;
  __builtin_memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T>
inline T from_bits(unsigned long long b) {
  T v;
  __builtin_memcpy(&v, &b, sizeof(T));
  return v;
}

}  // namespace gi_emu

inline void __syncthreads(unsigned gi_line = __builtin_LINE()) {
  gi_emu::block_barrier(gi_emu::Op::SyncThreads, 0, gi_line);
}
inline int __syncthreads_count(int p, unsigned gi_line = __builtin_LINE()) {
  return (int)gi_emu::block_barrier(gi_emu::Op::SyncCount, p, gi_line);
}
inline int __syncthreads_and(int p, unsigned gi_line = __builtin_LINE()) {
  return (int)gi_emu::block_barrier(gi_emu::Op::SyncAnd, p, gi_line);
}
inline int __syncthreads_or(int p, unsigned gi_line = __builtin_LINE()) {
  return (int)gi_emu::block_barrier(gi_emu::Op::SyncOr, p, gi_line);
}
inline void __syncwarp(unsigned mask = 0xffffffffu, unsigned gi_line = __builtin_LINE()) {
  gi_emu::warp_collective(gi_emu::Op::SyncWarp, mask, 0, 0, 32, false, gi_line);
}
namespace gi_emu {
unsigned long long active_mask(unsigned line);
}
inline unsigned __activemask(unsigned gi_line = __builtin_LINE()) { return (unsigned)gi_emu::active_mask(gi_line); }
inline unsigned __ballot_sync(unsigned mask, int p, unsigned gi_line = __builtin_LINE()) {
  return (unsigned)gi_emu::warp_collective(gi_emu::Op::Ballot, mask, p != 0, 0, 32, false, gi_line);
}
inline int __any_sync(unsigned mask, int p, unsigned gi_line = __builtin_LINE()) {
  return (int)gi_emu::warp_collective(gi_emu::Op::Any, mask, p != 0, 0, 32, false, gi_line);
}
inline int __all_sync(unsigned mask, int p, unsigned gi_line = __builtin_LINE()) {
  return (int)gi_emu::warp_collective(gi_emu::Op::All, mask, p != 0, 0, 32, false, gi_line);
}
inline int __uni_sync(unsigned mask, int p, unsigned gi_line = __builtin_LINE()) {
  const unsigned yes = __ballot_sync(mask, p, gi_line);
  return yes == 0u || yes == (mask & gi_emu::live_mask(gi_emu::current->warp));
}
template <class T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32, unsigned gi_line = __builtin_LINE()) {
  return gi_emu::from_bits<T>(
      gi_emu::warp_collective(gi_emu::Op::Shfl, mask, gi_emu::bits_of(v), src, width, false, gi_line));
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32, unsigned gi_line = __builtin_LINE()) {
  return gi_emu::from_bits<T>(
      gi_emu::warp_collective(gi_emu::Op::ShflUp, mask, gi_emu::bits_of(v), (int)delta, width, false, gi_line));
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32, unsigned gi_line = __builtin_LINE()) {
  return gi_emu::from_bits<T>(
      gi_emu::warp_collective(gi_emu::Op::ShflDown, mask, gi_emu::bits_of(v), (int)delta, width, false, gi_line));
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32, unsigned gi_line = __builtin_LINE()) {
  return gi_emu::from_bits<T>(
      gi_emu::warp_collective(gi_emu::Op::ShflXor, mask, gi_emu::bits_of(v), lane_mask, width, false, gi_line));
}
template <class T>
inline unsigned __match_any_sync(unsigned mask, T v, unsigned gi_line = __builtin_LINE()) {
  return (unsigned)gi_emu::warp_collective(gi_emu::Op::MatchAny, mask, gi_emu::bits_of(v), 0, 32, false, gi_line);
}
template <class T>
inline unsigned __match_all_sync(unsigned mask, T v, int* pred, unsigned gi_line = __builtin_LINE()) {
  const unsigned r =
      (unsigned)gi_emu::warp_collective(gi_emu::Op::MatchAll, mask, gi_emu::bits_of(v), 0, 32, false, gi_line);
  *pred = gi_emu::current->result2;
  return r;
}
inline int __reduce_add_sync(unsigned mask, int v, unsigned gi_line = __builtin_LINE()) {
  return (int)gi_emu::warp_collective(gi_emu::Op::ReduceAdd, mask, (unsigned)v, 0, 32, true, gi_line);
}
inline unsigned __reduce_add_sync(unsigned mask, unsigned v, unsigned gi_line = __builtin_LINE()) {
  return (unsigned)gi_emu::warp_collective(gi_emu::Op::ReduceAdd, mask, v, 0, 32, false, gi_line);
}
inline int __reduce_min_sync(unsigned mask, int v, unsigned gi_line = __builtin_LINE()) {
  return (int)gi_emu::warp_collective(gi_emu::Op::ReduceMin, mask, (unsigned)v, 0, 32, true, gi_line);
}
inline unsigned __reduce_min_sync(unsigned mask, unsigned v, unsigned gi_line = __builtin_LINE()) {
  return (unsigned)gi_emu::warp_collective(gi_emu::Op::ReduceMin, mask, v, 0, 32, false, gi_line);
}
inline int __reduce_max_sync(unsigned mask, int v, unsigned gi_line = __builtin_LINE()) {
  return (int)gi_emu::warp_collective(gi_emu::Op::ReduceMax, mask, (unsigned)v, 0, 32, true, gi_line);
}
inline unsigned __reduce_max_sync(unsigned mask, unsigned v, unsigned gi_line = __builtin_LINE()) {
  return (unsigned)gi_emu::warp_collective(gi_emu::Op::ReduceMax, mask, v, 0, 32, false, gi_line);
}
inline unsigned __reduce_and_sync(unsigned mask, unsigned v, unsigned gi_line = __builtin_LINE()) {
  return (unsigned)gi_emu::warp_collective(gi_emu::Op::ReduceAnd, mask, v, 0, 32, false, gi_line);
}
inline unsigned __reduce_or_sync(unsigned mask, unsigned v, unsigned gi_line = __builtin_LINE()) {
  return (unsigned)gi_emu::warp_collective(gi_emu::Op::ReduceOr, mask, v, 0, 32, false, gi_line);
}
inline unsigned __reduce_xor_sync(unsigned mask, unsigned v, unsigned gi_line = __builtin_LINE()) {
  return (unsigned)gi_emu::warp_collective(gi_emu::Op::ReduceXor, mask, v, 0, 32, false, gi_line);
}

// ------------------------------------------------------------ the scheduler
// Everything below runs the grid; the kernel sees none of it.
#include <stdarg.h>

extern "C" void gi_emulator_call(void** args);  // the generated launcher (after the kernel)

#if defined(__x86_64__)
// Saves the callee-saved registers, MXCSR and the x87 control word on the
// current stack, stores the stack pointer at *save and resumes `next`.
extern "C" void gi_emu_switch(void** save, void* next);
asm(R"(
  .text
  .p2align 4
  .hidden gi_emu_switch
  .globl gi_emu_switch
  .type gi_emu_switch, @function
gi_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size gi_emu_switch, .-gi_emu_switch
)");
#endif

namespace gi_emu {

struct Launch {
  unsigned grid[3], block[3];
  void** args;
  size_t dynamic_shared_bytes;
  size_t stack_bytes;
  // Where the launch is (for a crash report): block x,y,z, thread x,y,z.
  volatile unsigned* where;
  // The fiber stacks (for telling a stack overflow from another crash).
  void* volatile* stacks_begin;
  void* volatile* stacks_end;
};

inline Fiber* fibers = nullptr;
inline unsigned fiber_count = 0;
inline unsigned warp_count = 0;
inline unsigned* warp_live = nullptr;    // per warp: lanes that exist and have not exited
inline unsigned* warp_exists = nullptr;  // per warp: lanes that exist (a block's last warp may be partial)
inline unsigned live_threads = 0;
inline unsigned waiting_block = 0;
inline unsigned char* stacks = nullptr;
inline size_t stack_bytes = 0;
inline volatile unsigned* where = nullptr;
#if defined(__x86_64__)
inline void* scheduler_sp = nullptr;
#else
inline ucontext_t scheduler_context;
#endif

inline void fail(const char* fmt, ...) {
  if (failed) return;
  failed = true;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, message_size, fmt, ap);
  va_end(ap);
}

inline unsigned live_mask(unsigned warp) { return warp_live[warp]; }
inline unsigned exited_lanes(unsigned warp) { return warp_exists[warp] & ~warp_live[warp]; }

inline const char* op_name(Op op) {
  switch (op) {
    case Op::None: return "(running)";
    case Op::SyncThreads: return "__syncthreads";
    case Op::SyncCount: return "__syncthreads_count";
    case Op::SyncAnd: return "__syncthreads_and";
    case Op::SyncOr: return "__syncthreads_or";
    case Op::SyncWarp: return "__syncwarp";
    case Op::Shfl: return "__shfl_sync";
    case Op::ShflUp: return "__shfl_up_sync";
    case Op::ShflDown: return "__shfl_down_sync";
    case Op::ShflXor: return "__shfl_xor_sync";
    case Op::Ballot: return "__ballot_sync";
    case Op::Any: return "__any_sync";
    case Op::All: return "__all_sync";
    case Op::MatchAny: return "__match_any_sync";
    case Op::MatchAll: return "__match_all_sync";
    case Op::ReduceAdd: return "__reduce_add_sync";
    case Op::ReduceMin: return "__reduce_min_sync";
    case Op::ReduceMax: return "__reduce_max_sync";
    case Op::ReduceAnd: return "__reduce_and_sync";
    case Op::ReduceOr: return "__reduce_or_sync";
    case Op::ReduceXor: return "__reduce_xor_sync";
    case Op::ActiveMask: return "__activemask";
  }
  return "?";
}

inline void yield_to_scheduler() {
#if defined(__x86_64__)
  gi_emu_switch(&current->sp, scheduler_sp);
#else
  swapcontext(&current->context, &scheduler_context);
#endif
}

inline void fiber_main() {
  gi_emulator_call(nullptr);  // the launcher reads the arguments itself
  Fiber& f = *current;
  f.state = State::Done;
  --live_threads;
  warp_live[f.warp] &= ~(1u << f.lane);
  // A lane of the warp already waits in a collective whose mask names us.
  for (unsigned l = 0; l < 32; ++l) {
    const Fiber& g = fibers[(size_t)f.warp * 32 + l];
    if (g.state == State::WaitWarp && ((g.mask >> f.lane) & 1u))
      fail("thread (%u,%u,%u) (lane %u) exits while thread (%u,%u,%u) waits for it in %s(mask 0x%08x) at line %u "
           "(a collective whose mask names a lane that exited: undefined on the GPU)",
           f.tid.x, f.tid.y, f.tid.z, f.lane, g.tid.x, g.tid.y, g.tid.z, op_name(g.op), g.mask, g.line);
  }
  yield_to_scheduler();
  __builtin_trap();  // a finished fiber is never resumed
}

#if defined(__x86_64__)
extern "C" inline void gi_emu_fiber_entry() { fiber_main(); }
#else
inline void fiber_entry_ucontext() { fiber_main(); }
#endif

inline void* launch_args = nullptr;

inline void start_fiber(Fiber& f, unsigned index) {
  unsigned char* low = stacks + (size_t)index * (stack_bytes + 4096) + 4096;
  unsigned char* top = low + stack_bytes;
#if defined(__x86_64__)
  // The frame gi_emu_switch pops: control words, r15..rbp, return address.
  unsigned long long* sp = (unsigned long long*)((uintptr_t)top & ~(uintptr_t)15);
  *--sp = 0;                                       // padding: entry sees rsp % 16 == 8
  *--sp = (unsigned long long)&gi_emu_fiber_entry;  // return address
  for (int i = 0; i < 6; ++i) *--sp = 0;           // rbp rbx r12 r13 r14 r15
  unsigned mxcsr = 0;
  unsigned short fpcw = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpcw));
  *--sp = (unsigned long long)mxcsr | ((unsigned long long)fpcw << 32);
  f.sp = sp;
#else
  getcontext(&f.context);
  f.context.uc_stack.ss_sp = low;
  f.context.uc_stack.ss_size = stack_bytes;
  f.context.uc_link = nullptr;
  makecontext(&f.context, (void (*)())fiber_entry_ucontext, 0);
#endif
}

inline void resume(Fiber& f) {
  current = &f;
  threadIdx = f.tid;
  where[3] = f.tid.x;
  where[4] = f.tid.y;
  where[5] = f.tid.z;
#if defined(__x86_64__)
  gi_emu_switch(&scheduler_sp, f.sp);
#else
  swapcontext(&scheduler_context, &f.context);
#endif
}

inline unsigned long long poison(const Fiber&) { return 0x7FFA7FFA7FFA7FFAull; }

// The source lane of a shuffle for lane j, or -1 for the lane's own value.
inline int shuffle_source(const Fiber& f) {
  const int j = (int)f.lane, w = f.width, base = j & ~(w - 1);
  switch (f.op) {
    case Op::Shfl: return base + (f.arg & (w - 1));
    case Op::ShflUp: return j - f.arg < base ? -1 : j - f.arg;
    case Op::ShflDown: return j + f.arg >= base + w ? -1 : j + f.arg;
    case Op::ShflXor: return (j ^ f.arg) >= base + w ? -1 : (j ^ f.arg);
    default: return -1;
  }
}

inline bool is_shuffle(Op op) { return op == Op::Shfl || op == Op::ShflUp || op == Op::ShflDown || op == Op::ShflXor; }

// Results of a warp collective for the lanes `group` of `warp` (all waiting).
inline void complete(unsigned warp, unsigned group) {
  Fiber* lanes = fibers + (size_t)warp * 32;
  auto each = [&](auto fn) {
    for (unsigned l = 0; l < 32; ++l)
      if ((group >> l) & 1u) fn(lanes[l]);
  };
  const Op op = lanes[__builtin_ctz(group)].op;
  unsigned long long acc = 0;
  long long sacc = 0;
  bool first = true;
  unsigned ballot = 0;
  each([&](Fiber& f) {
    if (f.value != 0) ballot |= 1u << f.lane;
    const unsigned u = (unsigned)f.value;
    const int s = (int)u;
    switch (op) {
      case Op::ReduceAdd: acc += u; break;
      case Op::ReduceMin:
        if (f.is_signed) sacc = first || s < sacc ? s : sacc;
        else acc = first || u < acc ? u : acc;
        break;
      case Op::ReduceMax:
        if (f.is_signed) sacc = first || s > sacc ? s : sacc;
        else acc = first || u > acc ? u : acc;
        break;
      case Op::ReduceAnd: acc = first ? u : (acc & u); break;
      case Op::ReduceOr: acc |= u; break;
      case Op::ReduceXor: acc ^= u; break;
      default: break;
    }
    first = false;
  });
  each([&](Fiber& f) {
    switch (op) {
      case Op::SyncWarp: f.result = 0; break;
      case Op::Ballot: f.result = ballot; break;
      case Op::Any: f.result = ballot != 0; break;
      case Op::All: f.result = ballot == group; break;
      case Op::MatchAny: {
        unsigned same = 0;
        each([&](Fiber& g) {
          if (g.value == f.value) same |= 1u << g.lane;
        });
        f.result = same;
        break;
      }
      case Op::MatchAll: {
        bool all = true;
        each([&](Fiber& g) { all = all && g.value == f.value; });
        f.result = all ? group : 0u;
        f.result2 = all;
        break;
      }
      case Op::ReduceAdd: case Op::ReduceAnd: case Op::ReduceOr: case Op::ReduceXor:
        f.result = (unsigned)acc;
        break;
      case Op::ReduceMin: case Op::ReduceMax:
        f.result = f.is_signed ? (unsigned)(int)sacc : (unsigned)acc;
        break;
      default: {  // shuffles
        const int src = shuffle_source(f);
        if (src < 0) f.result = f.value;
        else if ((group >> src) & 1u) f.result = lanes[src].value;
        else f.result = poison(f);  // a lane that is not there: undefined on the GPU
      }
    }
  });
  each([&](Fiber& f) {
    f.state = State::Runnable;
    f.op = Op::None;
  });
}

inline unsigned long long alone(Fiber& f) {
  const unsigned group = 1u << f.lane;
  f.state = State::WaitWarp;
  complete(f.warp, group);
  f.state = State::Runnable;
  return f.result;
}

// The first lane of `group` whose collective differs from lane `l`'s (another
// collective, another mask or width), or -1 when the group agrees.
inline int disagreeing_lane(const Fiber* lanes, unsigned l, unsigned group, unsigned live) {
  const Fiber& f = lanes[l];
  for (unsigned m = 0; m < 32; ++m) {
    if (!((group >> m) & 1u)) continue;
    const Fiber& g = lanes[m];
    if (g.op != f.op || (g.mask & live) != group || (is_shuffle(f.op) && g.width != f.width)) return (int)m;
  }
  return -1;
}

// Every lane of `group` waits in a warp collective.
inline bool arrived(const Fiber* lanes, unsigned group) {
  for (unsigned m = 0; m < 32; ++m)
    if (((group >> m) & 1u) && lanes[m].state != State::WaitWarp) return false;
  return true;
}

// Completes every warp collective whose lanes have all arrived in the same
// collective with the same mask; false when none could.
inline bool resolve_warps() {
  bool any = false;
  for (unsigned w = 0; w < warp_count; ++w) {
    Fiber* lanes = fibers + (size_t)w * 32;
    const unsigned live = warp_live[w];
    for (unsigned l = 0; l < 32; ++l) {
      if (!((live >> l) & 1u) || lanes[l].state != State::WaitWarp) continue;
      const unsigned group = lanes[l].mask & live;
      if (!arrived(lanes, group) || disagreeing_lane(lanes, l, group, live) >= 0) continue;
      complete(w, group);
      any = true;
    }
  }
  return any;
}

// When nothing can go on: lanes whose group has arrived but disagrees (on
// the GPU: undefined). Fails the launch and returns true when there are.
inline bool report_mismatch() {
  for (unsigned w = 0; w < warp_count; ++w) {
    const Fiber* lanes = fibers + (size_t)w * 32;
    const unsigned live = warp_live[w];
    for (unsigned l = 0; l < 32; ++l) {
      if (!((live >> l) & 1u) || lanes[l].state != State::WaitWarp) continue;
      const unsigned group = lanes[l].mask & live;
      const int m = arrived(lanes, group) ? disagreeing_lane(lanes, l, group, live) : -1;
      if (m < 0) continue;
      const Fiber& f = lanes[l];
      const Fiber& g = lanes[m];
      fail("warp collective mismatch in block (%u,%u,%u), warp %u: thread (%u,%u,%u) waits in %s(mask 0x%08x) "
           "at line %u, thread (%u,%u,%u) in %s(mask 0x%08x) at line %u",
           blockIdx.x, blockIdx.y, blockIdx.z, w, f.tid.x, f.tid.y, f.tid.z, op_name(f.op), f.mask, f.line, g.tid.x,
           g.tid.y, g.tid.z, op_name(g.op), g.mask, g.line);
      return true;
    }
  }
  return false;
}

// __activemask: when no warp collective can complete, the lanes of a warp
// waiting in __activemask at one call site get the mask of that group.
inline bool resolve_active() {
  bool any = false;
  for (unsigned w = 0; w < warp_count; ++w) {
    Fiber* lanes = fibers + (size_t)w * 32;
    for (unsigned l = 0; l < 32; ++l) {
      if (lanes[l].state != State::WaitActive) continue;
      unsigned group = 0;
      for (unsigned m = l; m < 32; ++m)
        if (lanes[m].state == State::WaitActive && lanes[m].line == lanes[l].line) group |= 1u << m;
      for (unsigned m = l; m < 32; ++m)
        if ((group >> m) & 1u) {
          lanes[m].result = group;
          lanes[m].state = State::Runnable;
          lanes[m].op = Op::None;
        }
      any = true;
    }
  }
  return any;
}

inline unsigned long long active_mask(unsigned line) {
  Fiber& f = *current;
  f.op = Op::ActiveMask;
  f.line = line;
  f.state = State::WaitActive;
  yield_to_scheduler();
  return f.result;
}

inline void complete_block_barrier() {
  unsigned count = 0;
  for (unsigned i = 0; i < fiber_count; ++i)
    if (fibers[i].state == State::WaitBlock && fibers[i].value) ++count;
  const unsigned live = live_threads;
  for (unsigned i = 0; i < fiber_count; ++i) {
    Fiber& f = fibers[i];
    if (f.state != State::WaitBlock) continue;
    switch (f.op) {
      case Op::SyncCount: f.result = count; break;
      case Op::SyncAnd: f.result = count == live; break;
      case Op::SyncOr: f.result = count != 0; break;
      default: f.result = 0;
    }
    f.state = State::Runnable;
    f.op = Op::None;
  }
  waiting_block = 0;
}

// What a thread waits in, for a deadlock report.
extern "C" char __start_gi_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_gi_shared[] __attribute__((weak, visibility("hidden")));

inline void poison_shared(size_t dynamic_bytes) {
  for (size_t i = 0; i + 4 <= dynamic_bytes; i += 4) __builtin_memcpy(dynamic_shared + i, "\xFA\x7F\xFA\x7F", 4);
  if (__start_gi_shared == nullptr || __stop_gi_shared == nullptr) return;
  for (char* p = __start_gi_shared; p + 4 <= __stop_gi_shared; p += 4) __builtin_memcpy(p, "\xFA\x7F\xFA\x7F", 4);
}

inline int describe_wait(const Fiber& f, char* out, size_t size) {
  if (f.state == State::WaitBlock) return snprintf(out, size, "%s at line %u", op_name(f.op), f.line);
  return snprintf(out, size, "%s(mask 0x%08x) at line %u", op_name(f.op), f.mask, f.line);
}

inline void report_deadlock() {
  char text[8192];
  size_t used = (size_t)snprintf(text, sizeof text,
                                 "deadlock in block (%u,%u,%u): every live thread waits in a barrier that cannot "
                                 "complete (%u of %u threads exited):",
                                 blockIdx.x, blockIdx.y, blockIdx.z, fiber_count - live_threads, fiber_count);
  char previous[256] = "", now[256];
  unsigned first = 0;
  auto flush = [&](unsigned last) {
    if (previous[0] == 0 || used >= sizeof text) return;
    if (first == last)
      used += (size_t)snprintf(text + used, sizeof text - used, " thread %u waits in %s;", first, previous);
    else
      used += (size_t)snprintf(text + used, sizeof text - used, " threads %u-%u wait in %s;", first, last, previous);
  };
  unsigned last = 0;
  for (unsigned i = 0; i < fiber_count; ++i) {
    const Fiber& f = fibers[i];
    if (f.state == State::Done) now[0] = 0;
    else describe_wait(f, now, sizeof now);
    if (__builtin_strcmp(now, previous) != 0 || now[0] == 0) {
      flush(last);
      __builtin_strcpy(previous, now);
      first = i;
    }
    last = i;
  }
  flush(last);
  fail("%s (linear thread numbers; lines of kernel.cu)", text);
}

inline int run_block() {
  live_threads = fiber_count;
  waiting_block = 0;
  for (unsigned w = 0; w < warp_count; ++w) {
    const unsigned in_warp = fiber_count - w * 32 >= 32 ? 32 : fiber_count - w * 32;
    warp_live[w] = in_warp == 32 ? 0xffffffffu : ((1u << in_warp) - 1u);
    warp_exists[w] = warp_live[w];
  }
  for (unsigned i = 0; i < fiber_count; ++i) {
    Fiber& f = fibers[i];
    f.state = State::Runnable;
    f.op = Op::None;
    start_fiber(f, i);
  }
  for (;;) {
    for (unsigned i = 0; i < fiber_count; ++i) {
      Fiber& f = fibers[i];
      if (f.state != State::Runnable) continue;
      resume(f);
      if (failed) return 1;
      if (f.state == State::WaitBlock) ++waiting_block;
    }
    if (live_threads == 0) return 0;
    if (resolve_warps()) continue;
    if (resolve_active()) continue;
    if (waiting_block == live_threads) {
      complete_block_barrier();
      continue;
    }
    if (!report_mismatch()) report_deadlock();
    return 1;
  }
}

}  // namespace gi_emu

// Runs the whole grid, blocks one after another. Returns 0, or 1 with the
// reason in `message`.
extern "C" __attribute__((visibility("default"))) int gi_emulate_launch(const gi_emu::Launch* launch, char* message,
                                                                        size_t message_size) {
  using namespace gi_emu;
  gi_emu::message = message;
  gi_emu::message_size = message_size;
  failed = false;
  message[0] = 0;
  where = launch->where;
  launch_args = launch->args;
  dynamic_shared_size = launch->dynamic_shared_bytes;
  gridDim = dim3(launch->grid[0], launch->grid[1], launch->grid[2]);
  blockDim = dim3(launch->block[0], launch->block[1], launch->block[2]);
  fiber_count = blockDim.x * blockDim.y * blockDim.z;
  warp_count = (fiber_count + 31) / 32;
  if (launch->dynamic_shared_bytes > kDynamicSharedCapacity) {
    fail("%zu bytes of dynamic shared memory, more than the %zu a block can have", launch->dynamic_shared_bytes,
         kDynamicSharedCapacity);
    return 1;
  }
  dynamic_shared = dynamic_shared_end() - ((launch->dynamic_shared_bytes + 15) & ~(size_t)15);
  stack_bytes = (launch->stack_bytes + 4095) & ~(size_t)4095;
  const size_t total = (size_t)fiber_count * (stack_bytes + 4096);
  void* mapped = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) {
    fail("cannot map %zu bytes of fiber stacks", total);
    return 1;
  }
  stacks = (unsigned char*)mapped;
  for (unsigned i = 0; i < fiber_count; ++i) mprotect(stacks + (size_t)i * (stack_bytes + 4096), 4096, PROT_NONE);
  *launch->stacks_begin = stacks;
  *launch->stacks_end = stacks + total;
  // Fibers are allocated once per launch; warp_count * 32 so a warp's lanes
  // can be indexed past the block's last thread.
  fibers = new Fiber[(size_t)warp_count * 32];
  warp_live = new unsigned[warp_count];
  warp_exists = new unsigned[warp_count];
  for (unsigned i = 0; i < fiber_count; ++i) {
    Fiber& f = fibers[i];
    f.tid = uint3{i % blockDim.x, (i / blockDim.x) % blockDim.y, i / (blockDim.x * blockDim.y)};
    f.linear = i;
    f.lane = i % 32;
    f.warp = i / 32;
  }
  for (unsigned i = fiber_count; i < warp_count * 32; ++i) {
    fibers[i].state = State::Done;
    fibers[i].lane = i % 32;
    fibers[i].warp = i / 32;
  }
  for (unsigned z = 0; z < gridDim.z; ++z)
    for (unsigned y = 0; y < gridDim.y; ++y)
      for (unsigned x = 0; x < gridDim.x; ++x) {
        blockIdx = uint3{x, y, z};
        where[0] = x;
        where[1] = y;
        where[2] = z;
        // Shared memory starts as NaN words, as undefined as on the GPU.
        poison_shared(launch->dynamic_shared_bytes);
        if (run_block() != 0) return 1;
      }
  return 0;
}

namespace gi_emu {
// Calls the entry with the launch's arguments, each read from the pointer to
// its bytes as cuLaunchKernel takes them.
template <class... P, size_t... I>
inline void invoke(void (*entry)(P...), std::index_sequence<I...>) {
  void** args = (void**)launch_args;
  entry(*static_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(args[I])...);
}
template <class... P>
inline void invoke(void (*entry)(P...)) {
  invoke(entry, std::index_sequence_for<P...>{});
}
template <class... P>
struct Signature {
  static constexpr size_t count = sizeof...(P);
  static constexpr size_t sizes[sizeof...(P) + 1] = {sizeof(P)..., 0};
};
template <class... P>
constexpr Signature<P...> signature_of(void (*)(P...)) {
  return {};
}
}  // namespace gi_emu

// Variadic: a template's instance, `scale<float, 2>`, holds a comma.
#define GI_EMU_LAUNCHER(...)                                                                                 \
  extern "C" void gi_emulator_call(void**) { gi_emu::invoke(&__VA_ARGS__); }                                \
  extern "C" __attribute__((visibility("default"))) size_t gi_emulator_param_count() {                      \
    return decltype(gi_emu::signature_of(&__VA_ARGS__))::count;                                               \
  }                                                                                                          \
  extern "C" __attribute__((visibility("default"))) size_t gi_emulator_param_size(size_t i) {               \
    return decltype(gi_emu::signature_of(&__VA_ARGS__))::sizes[i];                                            \
  }

// ---------------------------------------------------------------- cooperative groups
// The part of the toolkit's cooperative groups gi's donors write
// (aggregate's _cg levels, grammar/edits/aggregate.cpp): reduce over the
// coalesced threads of a warp, with the operators of cooperative_groups/
// reduce.h. The kernel's `#include <cooperative_groups.h>` lines are blanked
// (emulation_source.cpp). Every lane of the group folds the group's values
// in lane order, so a float sum may differ from the GPU's tree in its last
// bits, as any reordered sum does; the tolerance judges it.
namespace cooperative_groups {
struct coalesced_group {
  unsigned mask;
};
inline coalesced_group coalesced_threads(unsigned gi_line = __builtin_LINE()) { return {__activemask(gi_line)}; }
template <class T>
struct plus {
  T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct less {
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <class T>
struct greater {
  T operator()(T a, T b) const { return a < b ? b : a; }
};
template <class T>
struct bit_and {
  T operator()(T a, T b) const { return a & b; }
};
template <class T>
struct bit_or {
  T operator()(T a, T b) const { return a | b; }
};
template <class T>
struct bit_xor {
  T operator()(T a, T b) const { return a ^ b; }
};
template <class T, class Op>
inline T reduce(const coalesced_group& g, T v, Op op, unsigned gi_line = __builtin_LINE()) {
  T out = v;
  bool first = true;
  for (int lane = 0; lane < 32; ++lane) {
    if (!(g.mask >> lane & 1u)) continue;
    const T x = __shfl_sync(g.mask, v, lane, 32, gi_line);
    out = first ? x : op(out, x);
    first = false;
  }
  return out;
}
}  // namespace cooperative_groups

// The kernel source follows (with `#line 1` so lines are kernel.cu's).

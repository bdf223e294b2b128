// A helper written for texture references, as CubicInterpolationCUDA's
// cubicTex2D is: a template over `texture<T, 2, mode>`, found by the
// kernel's build with -I and included with <...>.
#pragma once
template <class T, enum cudaTextureReadMode mode>
__device__ float four_taps(texture<T, 2, mode> tex, float x, float y) {
  return 0.25f * (tex2D(tex, x, y) + tex2D(tex, x + 1.0f, y) + tex2D(tex, x, y + 1.0f) + tex2D(tex, x + 1.0f, y + 1.0f));
}

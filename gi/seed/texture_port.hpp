#pragma once
// Texture references ported to texture objects, for gi init. CUDA 12 removed
// texture references (`texture<float4, 1, cudaReadModeElementType> tex;`
// bound by the host, read with `tex1Dfetch(tex, i)`), so a file that uses
// them builds with no compiler gi can use. Their replacement reads the same
// memory the same way: a `cudaTextureObject_t` kernel parameter read with
// `tex1Dfetch<float4>(tex, i)`. For each element-type texture reference the
// entry kernel reads with tex1Dfetch, or with tex1D/tex2D/tex3D (a reference
// of 1, 2 or 3 dimensions over a CUDA array):
//  - its declaration is blanked (lines kept, as gi/seed/kernel_cut.hpp does);
//  - the entry kernel gets a last parameter `cudaTextureObject_t NAME`;
//  - each `tex1Dfetch(NAME, i)` in the kernel becomes `tex1Dfetch<T>(NAME, i)`,
//    each `tex3D(NAME, x, y, z)` `tex3D<T>(NAME, x, y, z)`.
// A __device__ helper the kernel reaches that reads references gets them as
// last parameters too, and each call of it passes them on. The spec then
// drafts NAME as an in buffer with "texture": true, or with an array
// texture's extent and sampler. The host code that calls the kernel changes
// too (a texture object instead of a binding), which gi init says. Nothing
// is ported, with the reason, when a reference the kernel uses is layered
// or normalised, is named other than in a fetch of its dimensions, or is
// read by a template helper, by overloads that differ in what they read,
// or by a helper called from one that does not read it.
// A reference passed whole to a function (`cubicTex2D(coeffs, x, y)`, whose
// helper takes `texture<T, 2, mode>`, often from a header) is passed as
// `texture<T, dim>(coeffs)`: texture_reference_shim() defines that type over
// the object and the fetches of it, so such helpers build unchanged; gi init
// writes it beside kernel.cu as the first pre-include.
#include <string>
#include <string_view>
#include <vector>

namespace gi {

struct TexturePort {
  std::string source;                // the file with the port applied (unchanged when nothing was ported)
  std::vector<std::string> ported;   // "texture<float4, 1, ...> controlPointTexture (line 20)"
  std::string refusal;               // why the kernel's texture references were left as they are
  bool wraps_references = false;     // a reference is passed to a function: the source needs the shim
};

// The file a seed whose port wraps references pre-includes first.
inline constexpr const char* kTextureReferenceShimFile = "texture_references.cuh";
const char* texture_reference_shim();

// `entry`: the kernel to port (the file's only kernel when empty).
TexturePort port_texture_references(std::string_view source, const std::string& file_name, const std::string& entry);

}  // namespace gi

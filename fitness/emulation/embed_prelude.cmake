# Writes OUTPUT, a C++ source that holds the text of INPUT (the CUDA-on-CPU
# prelude) as a string, so the gi binary needs no file beside it.
# cmake -DINPUT=... -DOUTPUT=... -P embed_prelude.cmake
file(READ "${INPUT}" text)
string(FIND "${text}" ")gi_prelude\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} holds the raw-string delimiter )gi_prelude\"")
endif()
file(WRITE "${OUTPUT}.tmp"
     "// Generated from fitness/emulation/cuda_on_cpu.hpp by embed_prelude.cmake: do not edit.\n"
     "#include \"fitness/emulation/emulation_source.hpp\"\n"
     "namespace gi::fitness::emulation {\n"
     "const char* cuda_on_cpu_prelude() {\n"
     "  return R\"gi_prelude(${text})gi_prelude\";\n"
     "}\n"
     "}  // namespace gi::fitness::emulation\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")

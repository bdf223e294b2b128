#include "grammar/source_hash.hpp"

#include <gtest/gtest.h>

#include <string>

namespace {

using gi::grammar::normalise_source;
using gi::grammar::sha256_hex;

TEST(Sha256, EmptyString) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Abc) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, TwoBlockMessage448Bits) {
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, MillionAs) {
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundaries) {
  // 55, 56 and 64 bytes: the length field fits, just misses, or needs a block.
  EXPECT_EQ(sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST(NormaliseSource, CollapsesTrimsAndDropsEmptyLines) {
  EXPECT_EQ(normalise_source("  int   a =\t1;  \n\n\t\n  b += a;\n"), "int a = 1;\nb += a;\n");
}

TEST(NormaliseSource, CrLfIsLf) {
  EXPECT_EQ(normalise_source("x = 1;\r\ny = 2;\r\n"), normalise_source("x = 1;\ny = 2;\n"));
  EXPECT_EQ(normalise_source("x = 1;\r\ny = 2;\r\n"), "x = 1;\ny = 2;\n");
}

TEST(NormaliseSource, KeepsComments) {
  EXPECT_EQ(normalise_source("a; // keep   me\n/* and */ b;"), "a; // keep me\n/* and */ b;\n");
}

TEST(NormaliseSource, WhitespaceOnlyChangesShareAHash) {
  const std::string a = "__global__ void k(float* x) {\n  x[0] = 1;\n}\n";
  const std::string b = "__global__  void k(float* x)   {\r\n\n    x[0] = 1;   \r\n}";
  EXPECT_EQ(sha256_hex(normalise_source(a)), sha256_hex(normalise_source(b)));
}

TEST(NormaliseSource, RealChangesDoNotShareAHash) {
  const std::string a = "__global__ void k(float* x) {\n  x[0] = 1;\n}\n";
  const std::string b = "__global__ void k(float* x) {\n  x[0] = 2;\n}\n";
  EXPECT_NE(sha256_hex(normalise_source(a)), sha256_hex(normalise_source(b)));
  // Joining two lines is a change too (it can end a // comment's reach).
  EXPECT_NE(normalise_source("a; // c\nb;"), normalise_source("a; // c b;"));
}

}  // namespace

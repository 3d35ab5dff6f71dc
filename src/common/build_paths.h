// Where this build found its sources, assets and the shared data sets, and where it builds.
//
// The paths are compiled into one small object (build_paths.cc, library hotline_build_paths),
// not into every file that uses them: a compile line holding an absolute path differs from one
// checkout to the next, so a compiler cache could share none of those objects between a
// developer's tree and a CI clone. Files that need a path include this header and use the
// macros below, each an expression of type const char*.
//
//   const std::string kb = std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv";
//
// Thread-safety: the functions return pointers to constant strings; call from any thread.
#pragma once

namespace hotline::build_paths {

const char* SourceDir();      // the source tree (CMAKE_SOURCE_DIR)
const char* AssetsDir();      // SourceDir() + "/assets": shipped models, knowledge bases, voices
const char* SharedDataDir();  // the shared data sets (HOTLINE_SHARED_DATA_DIR, ../shared/data)
const char* BinaryDir();      // the build folder (CMAKE_BINARY_DIR): tests' scratch and binaries

}  // namespace hotline::build_paths

#define HOTLINE_SOURCE_DIR (::hotline::build_paths::SourceDir())
#define HOTLINE_ASSETS_DIR (::hotline::build_paths::AssetsDir())
#define HOTLINE_SHARED_DATA_DIR (::hotline::build_paths::SharedDataDir())
#define HOTLINE_BINARY_DIR (::hotline::build_paths::BinaryDir())

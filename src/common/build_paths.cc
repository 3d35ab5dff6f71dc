#include "common/build_paths.h"

// The only object whose compile line carries the absolute paths (see the header).
namespace hotline::build_paths {

const char* SourceDir() { return HOTLINE_BUILD_SOURCE_DIR; }
const char* AssetsDir() { return HOTLINE_BUILD_SOURCE_DIR "/assets"; }
const char* SharedDataDir() { return HOTLINE_BUILD_SHARED_DATA_DIR; }
const char* BinaryDir() { return HOTLINE_BUILD_BINARY_DIR; }

}  // namespace hotline::build_paths

#!/bin/sh
# Install the build into a scratch prefix, then build a small program
# against the installed server header and library only: as C and C++ via
# pkg-config, and via the CMake package. Run each.
set -eu
build=$1 prefix=$2 cc=$3 cxx=$4 extra=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name hipobj_server.pc | head -n1)
export PKG_CONFIG_PATH=$(dirname "$pc")
command -v pkg-config >/dev/null || { echo "pkg-config missing: skip"; exit 77; }
flags="$(pkg-config --cflags --libs hipobj_server) $extra"
libdir=$(pkg-config --variable=libdir hipobj_server)
"$cc" -std=c11 -Wall -Wextra -Werror -pedantic -o "$prefix/consumer_c" \
  -x c "$here/server_consumer.c" $flags
"$cxx" -std=c++11 -Wall -Wextra -Werror -pedantic -o "$prefix/consumer_cxx" \
  -x c++ "$here/server_consumer.c" $flags
LD_LIBRARY_PATH=$libdir "$prefix/consumer_c"
LD_LIBRARY_PATH=$libdir "$prefix/consumer_cxx"
mkdir -p "$prefix/cmake-consumer"
cat > "$prefix/cmake-consumer/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.25)
project(consumer C)
find_package(hipobj REQUIRED)
add_executable(consumer_cmake $here/server_consumer.c)
target_link_libraries(consumer_cmake hipobj::hipobj_server)
CM
cmake -S "$prefix/cmake-consumer" -B "$prefix/cmake-consumer/build" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" >/dev/null
cmake --build "$prefix/cmake-consumer/build" >/dev/null
LD_LIBRARY_PATH=$libdir "$prefix/cmake-consumer/build/consumer_cmake"
echo "installed server consumer: C, C++ and CMake package builds ran"

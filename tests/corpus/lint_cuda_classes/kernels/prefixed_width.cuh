// Warp widths named with the project's prefix are warp widths all the same.
// Traps: a tile size, and a half-warp constant that is not 32.
#pragma once
#define MYLIB_TILE_WARP_SIZE 32  // expect: PG508
#define MYLIB_TILE_SIZE 32
#define MYLIB_HALF_WARP_SIZE 16

// ... and a width written as a function is one too; a tile size is not.
__host__ __device__ constexpr int mylib_warp_size() noexcept { return 32; }  // expect: PG508
__host__ __device__ constexpr int tile_size() { return 32; }

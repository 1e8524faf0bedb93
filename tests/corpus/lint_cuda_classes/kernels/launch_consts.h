// Launch constants shared by host and device code; no CUDA keyword in sight.
#ifndef LAUNCH_CONSTS_H
#define LAUNCH_CONSTS_H

#define LOG2_WARP 5U  // expect: PG508
#define WARP_SIZE (1U << LOG2_WARP)  // expect: PG508
#define BITS_PER_WORD 32
#define ROWS_PER_BLOCK (4 * WARP_SIZE)

#endif

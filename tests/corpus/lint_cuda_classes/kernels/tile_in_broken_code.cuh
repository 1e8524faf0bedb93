// A tile in code tree-sitter cannot parse cleanly (a stray token stands in
// for a construct it does not know): its recovery reads no template here, so
// the tile is read from the text. A comment naming cg::tiled_partition<32>
// is no finding.
__device__ void group(int *out) {
  auto tile = cg::tiled_partition<32>(block) @@ ;  // expect: PG506
  out[tile.thread_rank()] = 0;
}

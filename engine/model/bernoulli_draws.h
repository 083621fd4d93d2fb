// Bernoulli draws on the CPU at the pace of a product, where LibTorch draws one at a time.
//
// Dropout on the CPU fills its mask with ATen's bernoulli_(p), in place. Without MKL (Debian's
// LibTorch) that kernel calls the default generator once per element: 8 ns an element, about
// a sixth of a transformer's training step on the CPU. install_bernoulli_draws() replaces
// ATen's CPU kernel of bernoulli_.float there: the same tensor is filled with 0 and 1, each 1
// with probability p (16 bits of SplitMix64 in counter form per element), seeded once per call
// from the generator given or the CPU's default one, so that a seed, or a checkpoint's restored
// generator, gives the same draws again, with any number of threads. No tensor is made or
// kept that LibTorch's kernel does not make: every memory figure is LibTorch's own. Where
// LibTorch has MKL (PyTorch's builds), whose kernel draws in bulk, nothing is replaced.
#pragma once

namespace oomlab::model {

// Done when this library loads; later calls do nothing.
void install_bernoulli_draws();

}  // namespace oomlab::model

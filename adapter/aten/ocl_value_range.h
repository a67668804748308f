// ocl_value_range.h - what the host knows of an integer tensor's values
// without reading them back, so that nll_loss's target check and
// index_select's index check need not wait for the device.
//
// A fact "every value of this storage, read as dtype D, lies in [lo, hi]" is
// noted where the host knows it for free: a copy from the host (the host
// takes the min and max of what it sends), random_(from, to) (randint), a
// device copy of a tensor with a fact, and the indices argmax / argmin and
// max / min along a dim return. It holds while the tensor's version
// counter has the value it had when noted: an in-place write through the
// dispatcher moves it (a write that did, e.g. copy_ from Python, leaves no
// usable fact). A write that bypasses the counter (through .data, or a
// second tensor set_ on the storage) is not seen here; nll_loss then still
// reads its flag back, and index_select its indices' bounds, without
// waiting, and a bad value fails the next synchronization
// (tocl_copy_flag_later, tocl_index_check_later), never silently.
#pragma once

#include <ATen/core/Tensor.h>

namespace torch_ocl {

// t's values (all of its storage) lie in [lo, hi]. Ignored unless t is an
// integer tensor that covers its whole storage and has a version counter.
void note_value_range(const at::Tensor& t, int64_t lo, int64_t hi);
// The host knows every value of t lies in [lo, hi].
bool values_known_within(const at::Tensor& t, int64_t lo, int64_t hi);
// dst was just made a copy of src (same dtype): src's fact, if any, is dst's.
void note_copied_range(const at::Tensor& dst, const at::Tensor& src);

// Checks since the process started that a fact spared the host's wait
// (their values read back later) and those that waited: nll_loss's targets,
// index_select's (and so embedding's) indices.
enum class CheckKind { target = 0, index = 1 };
void count_check(CheckKind kind, bool spared);
struct CheckCounts {
  int64_t spared, waited;
};
CheckCounts check_counts(CheckKind kind);

}  // namespace torch_ocl

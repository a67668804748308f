"""Known OpInfo mismatches on ocl, each with its reason: the one place they are listed.

Keys are (OpInfo name, dtype name) or (OpInfo name, "*") for every dtype.
A listed case still runs and is still reported; the reason is printed beside it.
"""

KNOWN_MISMATCHES = {
    # The samples take views that reach storage beyond the base tensor's own
    # elements; the harness moves tensors with .to(), which copies only the
    # elements, so the ocl view reads different memory. A harness limitation,
    # not an as_strided bug.
    ("as_strided.partial_views", "*"): "views read the base storage beyond the tensor, which .to() does not copy",
}

"""Expected times: each op's bound on its card (its own F at the peak, its own R at the bandwidth) divided by the
fraction of that bound kernels of its kind and shape achieve on the device, as published kernel-level measurements
show (stdlib/efficiency/*.toml). The bound stays the bound; the expected time sits beside it."""

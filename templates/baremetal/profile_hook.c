/* Per-layer profiling builds: the generated code calls EDGECC_TRACE after every layer
 * (-DEDGECC_TRACE=edgecc_profile_hook). The hook does nothing; the QEMU counting plugin records
 * the instruction count each time its first instruction executes. */
void edgecc_profile_hook(int id, const void *ptr, unsigned n) __attribute__((noinline));
void edgecc_profile_hook(int id, const void *ptr, unsigned n) {
    (void)id;
    (void)ptr;
    (void)n;
    __asm__ volatile("" ::: "memory"); /* keep calls from being merged or dropped */
}

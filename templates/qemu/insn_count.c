/* edgecc instruction-counting TCG plugin for QEMU (plugin API version 1, QEMU 7.2).
 *
 * Debian ships QEMU with plugin support but without qemu-plugin.h, so the few prototypes used are
 * declared here; they match QEMU's public plugin API. Build: gcc -O2 -shared -fPIC.
 *
 * Counts every executed guest instruction with an inline add (exact and repeatable: TCG executes
 * each guest instruction exactly once, whatever the wall clock does). Arguments:
 *   out=PATH       write the results there at exit (required)
 *   mark=0xADDR    (repeatable) record the running count each time the instruction at ADDR executes
 * PATH receives "total N" and one "mark ADDR N" line per recorded execution, in order, which is
 * how per-layer counts are taken: a mark on the entry of an empty per-layer hook function.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

typedef void (*tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
                                                enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_MARK_ADDRS 16
static uint64_t count;
static char out_path[4096];
static uint64_t mark_addrs[MAX_MARK_ADDRS];
static int n_mark_addrs;
static uint64_t *marks; /* pairs (address, count) */
static size_t n_marks, cap_marks;

static void on_mark(unsigned int vcpu, void *userdata) {
    (void)vcpu;
    if (n_marks == cap_marks) {
        cap_marks = cap_marks ? 2 * cap_marks : 1024;
        marks = realloc(marks, cap_marks * 2 * sizeof *marks);
        if (!marks) abort();
    }
    marks[2 * n_marks] = (uint64_t)(uintptr_t)userdata;
    marks[2 * n_marks + 1] = count;
    ++n_marks;
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    size_t i, n = qemu_plugin_tb_n_insns(tb);
    int k;
    (void)id;
    for (i = 0; i < n; ++i) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t va = qemu_plugin_insn_vaddr(insn);
        /* The mark callback is registered first, so it sees the count before this instruction. */
        for (k = 0; k < n_mark_addrs; ++k)
            if (mark_addrs[k] == va)
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS,
                                                       (void *)(uintptr_t)va);
        qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &count, 1);
    }
}

static void on_exit_cb(qemu_plugin_id_t id, void *userdata) {
    FILE *f = fopen(out_path, "w");
    size_t i;
    (void)id;
    (void)userdata;
    if (!f) return;
    fprintf(f, "total %" PRIu64 "\n", count);
    for (i = 0; i < n_marks; ++i)
        fprintf(f, "mark 0x%" PRIx64 " %" PRIu64 "\n", marks[2 * i], marks[2 * i + 1]);
    fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info, int argc, char **argv) {
    int i;
    (void)info;
    for (i = 0; i < argc; ++i) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
        } else if (strncmp(argv[i], "mark=", 5) == 0 && n_mark_addrs < MAX_MARK_ADDRS) {
            mark_addrs[n_mark_addrs++] = strtoull(argv[i] + 5, NULL, 0);
        } else {
            fprintf(stderr, "insn_count: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    if (!out_path[0]) {
        fprintf(stderr, "insn_count: needs out=PATH\n");
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
    qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
    return 0;
}

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * blkio source, kernel side: which file a read under a page fault was for. The page cache
 * takes a new folio (mm_filemap_add_to_page_cache) in the context of the thread that will read
 * it; one added while a traced user thread is in no syscall (its saved orig_ax -1: a page
 * fault) is remembered by its address with its file's inode, disk and dentry name. A request
 * whose first page is such a folio, still that file's page at that index as the request
 * completes, read that file: its completion record says so. Proof by identity (the same page),
 * never by timing. An entry is kept after its match (a loop device's request and the backing
 * disk's read into the same page both complete) until the LRU drops it; a page freed and reused
 * since fails the check of its mapping. Only the pages traced threads fault in are named: the
 * completions of the whole machine are written, their files are not. Included by blkio.bpf.c.
 */
#ifndef WHYSLOW_BLKIO_FAULT_BPF_H
#define WHYSLOW_BLKIO_FAULT_BPF_H

#include <whyslow/arch.bpf.h>

struct fault_page {
	__u64 host;  /* the folio's mapping's inode, as added */
	__u64 index; /* and its index there */
	__u64 ino;
	__u32 dev; /* the file system's s_dev (MAJOR << 20 | MINOR, as a request's disk) */
	__u32 reserved;
	char name[WS_BLKIO_FAULT_NAME];
};

/* Folios a fault added, until their request completes (LRU: one read from cache makes none). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u64);
	__type(value, struct fault_page);
	__uint(max_entries, 1024);
} fault_pages SEC(".maps");

/* A fault added a page since tracing began: until then a completion looks nothing up. */
__u32 fault_seen;

/*
 * Every folio the page cache takes passes here: a flags test and one load of the saved
 * orig_ax end it for kernel threads and reads inside a syscall (read(), readahead), one hash
 * lookup (the traced tgids) for the faults of other processes.
 */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(ws_blkio_fault_add, struct folio *folio)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct fault_page fp = {};
	struct pt_regs *regs;
	struct inode *inode;
	struct dentry *d;
	__u64 key = (__u64)folio, alias;

	if (ws_task_no_user(cur))
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(cur);
	if (!regs || (long)WS_SYS_NR(regs) != -1 || !ws_traced_tgid(cur->tgid))
		return 0;
	inode = BPF_CORE_READ(folio, mapping, host);
	fp.host = (__u64)inode;
	fp.index = BPF_CORE_READ(folio, index);
	fp.ino = BPF_CORE_READ(inode, i_ino);
	fp.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	/* a file's dentry: the first alias of its inode (none: an inode of no name, a device's) */
	alias = (__u64)BPF_CORE_READ(inode, i_dentry.first);
	if (alias) {
		d = (struct dentry *)(alias - bpf_core_field_offset(struct dentry, d_u));
		bpf_probe_read_kernel_str(fp.name, sizeof(fp.name), BPF_CORE_READ(d, d_name.name));
	}
	if (!bpf_map_update_elem(&fault_pages, &key, &fp, BPF_ANY) && !fault_seen)
		fault_seen = 1;
	return 0;
}

/* The file of request @rq's first page, when a fault added it and it is still that page: @r. */
static __always_inline void take_fault(struct request *rq, struct ws_blkio_done *r)
{
	struct fault_page *fp;
	struct folio *folio;
	__u64 key;

	r->fault_ino = 0;
	r->fault_dev = 0;
	r->reserved2 = 0;
	r->fault_name[0] = 0;
	if (!fault_seen)
		return;
	key = (__u64)BPF_CORE_READ(rq, bio, bi_io_vec, bv_page);
	fp = bpf_map_lookup_elem(&fault_pages, &key);
	if (!fp)
		return;
	/* a folio's first page is the folio: its mapping and index now */
	folio = (struct folio *)key;
	if ((__u64)BPF_CORE_READ(folio, mapping, host) != fp->host ||
	    BPF_CORE_READ(folio, index) != fp->index)
		return;
	r->fault_ino = fp->ino;
	r->fault_dev = fp->dev;
	__builtin_memcpy(r->fault_name, fp->name, sizeof(r->fault_name));
}

#endif

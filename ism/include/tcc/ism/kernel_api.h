/* The ISM entry points generated kernels call: plain C, no includes, so the
 * emitter pastes this into the self-contained code it writes. A kernel
 * creates one workspace per sparse workspace it uses, inserts every
 * component through the entry point specialised for the workspace's policy
 * and order (no dispatch per component), and finishes it straight into its
 * output tensor (Sort, Merge and Compress into the output's level chain).
 * Each call returns 0 (or a non-null workspace) on success; on failure
 * tcc_ism_kernel_last_error() says why. Defined in libtcc_ism_runtime.
 */
#ifndef TCC_ISM_KERNEL_API_H
#define TCC_ISM_KERNEL_API_H

#ifdef __cplusplus
extern "C" {
#endif

struct tcc_tensor;

/* Policies as in c_api.h: 0 bucket, 1 hash, 2 coord, 3 map, 4 vector.
 * flags: 1 pipelining, 2 double buffering, 4 the output's arrays of 4 MB
 * and more in 2 MB pages (tcc/runtime/array_alloc.h). dims[order] in mode order;
 * level_order[order]: the mode each level of the result stores. */
void* tcc_ism_kernel_create(int order, const int* dims, const int* level_order, int policy,
                            int flags, long long capacity, long long nnz_hint);

/* The same for a parallel producer: one workspace per thread, merged in
 * parallel when finished. tcc_ism_kernel_thread_handle gives thread
 * `thread`'s own workspace, filled through the insert entry points below;
 * finish and destroy take the whole. */
void* tcc_ism_kernel_create_per_thread(int threads, int order, const int* dims, const int* level_order,
                                       int policy, int flags, long long capacity, long long nnz_hint);
void* tcc_ism_kernel_thread_handle(void* w, int thread);

/* Finishing per-thread workspaces on the caller's own threads (an OpenMP
 * kernel's team, which keeps its binding to cores), straight into the
 * output, in four steps; the calls of a step may run on any threads at once:
 *   finish_thread(w, t) for every t < thread_count(w): sorts and merges
 *     thread t's workspace into its run;
 *   parts = merge_parts(w, output, unique_mask) (one thread): cuts the runs
 *     into parts by ranges of the output's first level;
 *   merge_part(w, p) for every p < parts: merges part p and counts its
 *     positions at every level of the output;
 *   allocate_output(w) (one thread): a prefix sum over the parts' counts
 *     sizes the output's arrays;
 *   fill_part(w, p) for every p < parts: writes part p's slice of them;
 * then finish(w, output, unique_mask) hands the arrays to the output.
 * Failures are kept and reported by finish; a step left out is done by
 * finish itself. */
int tcc_ism_kernel_thread_count(void* w);
/* Threads that own ranges of the output's first level: the ranges, cuts[p]
 * to cuts[p + 1] for p < parts (cuts[parts] the level's size), each filled
 * by one thread. merge_parts then cuts the output there, so each part lies
 * in one thread's run and is read in place, without a merge or a copy. */
void tcc_ism_kernel_owned_ranges(void* w, const long long* cuts, int parts);
void tcc_ism_kernel_finish_thread(void* w, int thread);
int tcc_ism_kernel_merge_parts(void* w, struct tcc_tensor* output, int unique_mask);
void tcc_ism_kernel_merge_part(void* w, int part);
void tcc_ism_kernel_allocate_output(void* w);
void tcc_ism_kernel_fill_part(void* w, int part);

/* Insert, one entry point per policy and order; coordinates in mode order.
 * A failed insert (a coordinate out of range, memory exhausted) returns
 * non-zero and is remembered: finish then fails with its reason, so a
 * kernel need not leave a thread loop to report it. */
int tcc_ism_insert_bucket_1(void* w, int c0, double v);
int tcc_ism_insert_bucket_2(void* w, int c0, int c1, double v);
int tcc_ism_insert_bucket_3(void* w, int c0, int c1, int c2, double v);
int tcc_ism_insert_bucket_4(void* w, int c0, int c1, int c2, int c3, double v);
int tcc_ism_insert_hash_1(void* w, int c0, double v);
int tcc_ism_insert_hash_2(void* w, int c0, int c1, double v);
int tcc_ism_insert_hash_3(void* w, int c0, int c1, int c2, double v);
int tcc_ism_insert_hash_4(void* w, int c0, int c1, int c2, int c3, double v);
int tcc_ism_insert_coord_1(void* w, int c0, double v);
int tcc_ism_insert_coord_2(void* w, int c0, int c1, double v);
int tcc_ism_insert_coord_3(void* w, int c0, int c1, int c2, double v);
int tcc_ism_insert_coord_4(void* w, int c0, int c1, int c2, int c3, double v);
int tcc_ism_insert_map_1(void* w, int c0, double v);
int tcc_ism_insert_map_2(void* w, int c0, int c1, double v);
int tcc_ism_insert_map_3(void* w, int c0, int c1, int c2, double v);
int tcc_ism_insert_map_4(void* w, int c0, int c1, int c2, int c3, double v);
int tcc_ism_insert_vector_1(void* w, int c0, double v);
int tcc_ism_insert_vector_2(void* w, int c0, int c1, double v);
int tcc_ism_insert_vector_3(void* w, int c0, int c1, int c2, double v);
int tcc_ism_insert_vector_4(void* w, int c0, int c1, int c2, int c3, double v);

/* Policies a program registered (tcc/ism/policy_registry.h): the id to
 * pass to create (-1 for an unknown name; 0 to 4 for the built-in ones),
 * and one insert per order that reaches the policy through a virtual call. */
int tcc_ism_kernel_policy_id(const char* name);
int tcc_ism_insert_user_1(void* w, int c0, double v);
int tcc_ism_insert_user_2(void* w, int c0, int c1, double v);
int tcc_ism_insert_user_3(void* w, int c0, int c1, int c2, double v);
int tcc_ism_insert_user_4(void* w, int c0, int c1, int c2, int c3, double v);

/* Sorts and merges what is left and compresses it into `output`'s levels
 * (their kinds and mode ordering as the tensor describes them; bit l of
 * unique_mask set when level l is unique), writing its pos, crd and vals
 * (malloc'd, adopted by the caller) in its element type. */
int tcc_ism_kernel_finish(void* w, struct tcc_tensor* output, int unique_mask);

/* A workspace that a loop reuses (hoisted common iteration: one per row,
 * say) or whose consumer reads it: drain sorts and merges what was inserted
 * since the last drain, compresses it into unique compressed levels in the
 * workspace's level order, and empties the workspace for the next round.
 * The drained arrays belong to the workspace and stay valid until the next
 * drain or destroy: pos and crd of each level, and the values. */
int tcc_ism_kernel_drain(void* w);
/* Non-zero (and tcc_ism_kernel_last_error says why) when an insert or a
 * drain of the workspace, or of any of its threads' workspaces, failed: a
 * kernel that drains on threads checks this once after its loops. */
int tcc_ism_kernel_status(void* w);
long long* tcc_ism_kernel_drained_pos(void* w, int level);
int* tcc_ism_kernel_drained_crd(void* w, int level);
double* tcc_ism_kernel_drained_vals(void* w);

void tcc_ism_kernel_destroy(void* w);

/* The reason the last failing call on this thread failed. */
const char* tcc_ism_kernel_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TCC_ISM_KERNEL_API_H */

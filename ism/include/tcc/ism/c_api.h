/* The ISM's C facade, for generated kernels (which carry no system
 * headers) and for any C caller. Plain C, no includes; the functions are
 * defined in c_api_impl.h, which exactly one library translation unit
 * includes.
 *
 * Use:
 *   int dims[2] = {I, J};
 *   tcc_ism_workspace* w = tcc_ism_create(2, dims, 0, TCC_ISM_BUCKET,
 *                                         TCC_ISM_DOUBLE_BUFFER, 0, 0);
 *   int c[2]; c[0] = i; c[1] = j; tcc_ism_insert(w, c, v);   (many times)
 *   int kinds[2] = {0, 1}, unique[2] = {1, 1};            (CSR)
 *   tcc_ism_level_arrays lv[2]; double* vals; long long nvals;
 *   tcc_ism_finish(w, kinds, unique, lv, &vals, &nvals);
 *   tcc_ism_destroy(w);
 * Every call returns 0 (or a non-null workspace) on success; on failure,
 * tcc_ism_last_error() says why. Output arrays come from malloc and belong
 * to the caller, who frees them with free(); a dense level has none.
 */
#ifndef TCC_ISM_C_API_H
#define TCC_ISM_C_API_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tcc_ism_workspace tcc_ism_workspace;

enum tcc_ism_policy {
  TCC_ISM_BUCKET = 0, /* L = first level's dimension, h = first coordinate */
  TCC_ISM_HASH = 1,   /* L = 2^ceil(log2 nnz_hint), h = linear index mod L */
  TCC_ISM_COORD = 2,  /* append, lexicographic sort when full */
  TCC_ISM_MAP = 3,    /* one ordered map (comparison extreme) */
  TCC_ISM_VECTOR = 4  /* one vector sorted at the end (comparison extreme) */
};

enum tcc_ism_flag {
  TCC_ISM_PIPELINE = 1,      /* sort + merge on a second thread */
  TCC_ISM_DOUBLE_BUFFER = 2  /* two all arrays, no temporary per merge */
};

/* One output level; kinds as tcc_level_kind: 0 dense, 1 compressed,
 * 2 singleton. pos is set for compressed levels, crd for compressed and
 * singleton ones; the other pointers are null and sizes 0. */
typedef struct tcc_ism_level_arrays {
  long long* pos;
  long long pos_size;
  int* crd;
  long long crd_size;
} tcc_ism_level_arrays;

/* order 1..4; dims[order] in mode order; level_order[order] names the mode
 * stored at each level (null: identity; {1,0} makes CSC from a CSR chain);
 * capacity: first accumulation capacity (0: default); nnz_hint: expected
 * result nonzeros (0: unknown). Returns null on bad arguments. */
tcc_ism_workspace* tcc_ism_create(int order, const int* dims, const int* level_order,
                                  int policy, int flags, long long capacity,
                                  long long nnz_hint);

/* Adds value at coords[order] (mode order). */
int tcc_ism_insert(tcc_ism_workspace* workspace, const int* coords, double value);

/* Sorts and merges what is left and compresses into the level chain given by
 * level_kinds[order] and level_unique[order] (1 unique, 0 not), outermost
 * first, writing levels[order], *vals and *vals_size. Call at most once. */
int tcc_ism_finish(tcc_ism_workspace* workspace, const int* level_kinds,
                   const int* level_unique, tcc_ism_level_arrays* levels, double** vals,
                   long long* vals_size);

/* Number of distinct components merged so far (complete after finish). */
long long tcc_ism_size(const tcc_ism_workspace* workspace);

void tcc_ism_destroy(tcc_ism_workspace* workspace);

/* The reason the last failing call on this thread failed. */
const char* tcc_ism_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TCC_ISM_C_API_H */

/* The C ABI between generated kernels and the tcc runtime.
 *
 * A kernel's entry point is `int32_t NAME(tcc_tensor** tensors)`, tensors in
 * the order its Function lists them. It returns 0 on success. Inputs are
 * read-only views of runtime storage. Outputs arrive with their dimensions,
 * level kinds and mode ordering set; a kernel that assembles a sparse
 * output allocates pos/crd/vals from the malloc family (array_alloc.h: large
 * ones 2 MB-aligned, in huge pages), and the runtime adopts those buffers
 * and frees them with free().
 *
 * This header is plain C with no includes, so the emitter can paste it into
 * the self-contained C++ it generates (see lowering's prelude).
 */
#ifndef TCC_RUNTIME_ABI_H
#define TCC_RUNTIME_ABI_H

#define TCC_MAX_ORDER 8

enum tcc_level_kind {
  TCC_LEVEL_DENSE = 0,      /* coordinates 0..size-1, located by arithmetic */
  TCC_LEVEL_COMPRESSED = 1, /* pos[parent]..pos[parent+1] index crd */
  TCC_LEVEL_SINGLETON = 2,  /* one coordinate per parent position: crd[p] */
  TCC_LEVEL_NM = 3          /* vector-wise N:M: the last level of a matrix, see tcc/runtime/nm.h */
};

enum tcc_datatype {
  TCC_FLOAT64 = 0,
  TCC_FLOAT32 = 1,
  TCC_FLOAT16 = 2, /* storage only */
  TCC_INT32 = 3,
  TCC_INT64 = 4
};

typedef struct tcc_level {
  int kind;        /* enum tcc_level_kind */
  int size;        /* dimension of the mode this level stores */
  long long* pos;  /* compressed: parent positions + 1 entries */
  int* crd;        /* compressed, singleton: one per position */
  long long pos_capacity; /* entries allocated in pos (kernels that grow it) */
  long long crd_capacity; /* entries allocated in crd */
  int nm_n, nm_m, nm_l;   /* nm: N vectors kept of every M rows, vectors of length L */
} tcc_level;

typedef struct tcc_tensor {
  int order;                          /* number of modes; 0 for a scalar */
  int datatype;                       /* enum tcc_datatype */
  int dims[TCC_MAX_ORDER];            /* size of each mode, in mode order */
  int mode_ordering[TCC_MAX_ORDER];   /* level l stores mode mode_ordering[l] */
  tcc_level levels[TCC_MAX_ORDER];    /* outermost level first */
  void* vals;                         /* one value per position of the last level */
  long long vals_size;                /* number of values */
  long long vals_capacity;            /* values allocated */
} tcc_tensor;

#endif /* TCC_RUNTIME_ABI_H */

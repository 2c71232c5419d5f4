/* The private table between libaxon-core and libaxon-mpi.so, the library
 * holding every MPI call of the multi-worker strategy. The core loads it
 * with dlopen only when a run asks for --strategy multi-worker, so a run on
 * one machine never needs libmpi. Not part of the SDK: both sides are built
 * together and the version must match exactly.
 *
 * Every collective is non-blocking underneath and polled until `timeout_s`
 * (0 = no limit); calls return AXON_MPI_OK, AXON_MPI_ERROR (message in err)
 * or AXON_MPI_TIMEOUT. Every rank must call the collectives in the same order.
 */
#ifndef AXON_MPI_H
#define AXON_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AXON_MPI_TABLE_VERSION 1
#define AXON_MPI_ENTRY_SYMBOL "axon_mpi_table"

enum { AXON_MPI_OK = 0, AXON_MPI_ERROR = 1, AXON_MPI_TIMEOUT = 2 };

typedef struct axon_mpi_api {
  uint32_t version; /* AXON_MPI_TABLE_VERSION */
  /* MPI_Init_thread (collectives come from one thread at a time): this
   * process's rank and the job's size. */
  int (*init)(int* rank, int* size, char* err, size_t err_size);
  /* MPI_Finalize; every rank calls it at a normal end. */
  void (*finalize)(void);
  /* MPI_Abort on the world: ends every rank of the job with `code`. */
  void (*abort)(int code);
  /* Rank 0's `bytes` bytes to every rank. */
  int (*broadcast)(void* data, int64_t bytes, double timeout_s, char* err, size_t err_size);
  /* The sum over ranks of `count` floats, in place on every rank. The order
   * is fixed: element i is ((x0[i] + x1[i]) + x2[i]) + ... by rank, so the
   * result is the same on every rank and on every run. */
  int (*all_reduce_sum_f32)(float* data, int64_t count, double timeout_s, char* err, size_t err_size);
  /* Every rank's `bytes_each` bytes, by rank, into `all` (size x bytes_each). */
  int (*all_gather)(const void* mine, void* all, int64_t bytes_each, double timeout_s, char* err, size_t err_size);
  /* MPI_Get_library_version's first line, and MPI_Get_processor_name. */
  const char* (*library_version)(void);
  const char* (*processor_name)(void);
} axon_mpi_api;

typedef const axon_mpi_api* (*axon_mpi_table_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* AXON_MPI_H */

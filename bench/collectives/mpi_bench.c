/* MPI's collectives, one process per rank: the Open MPI peer of bench/collectives.sh, started by mpirun
 * (see bench/collectives-lib.sh for how the ranks land in their namespaces). Rank 0 prints one RESULT
 * line per operation and size, in the format of gloo_bench.cc's header, with impl=mpi.
 *
 *   mpi_bench [--ops LIST] [--algo LABEL] [--min-bytes B] [--max-bytes B] [--budget S] [--warmup S]
 *             [--min-iters N] [--max-iters N]
 *
 * Operations (--ops, comma-separated, default all three): allreduce (MPI_Allreduce), allgather
 * (MPI_Allgather), reduce_scatter (MPI_Reduce_scatter_block); float32, MPI_SUM, out of place, with the
 * algorithm Open MPI picks (its coll component decides per size), or the one mpirun's MCA parameters force
 * (coll_tuned_*_algorithm): --algo only names it in the RESULT lines (default: "default").
 * Sizes, timing, batches, checks and the bandwidth figures are gloo_bench.cc's: see its header. Being out
 * of place, every operation here reads the same input, so the result is checked after the first
 * operation and again after the timed ones, for every operation. */

#include <mpi.h>
#include <sys/resource.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct options {
  const char *ops, *algo;
  size_t min_bytes, max_bytes;
  double budget, warmup;
  long min_iters, max_iters;
};

static int rank, ranks;

static void usage(const char *why) {
  if (rank == 0)
    fprintf(stderr,
            "mpi_bench: %s\nusage: mpi_bench [--ops LIST] [--algo LABEL] [--min-bytes B] [--max-bytes B] [--budget S] "
            "[--warmup S] [--min-iters N] [--max-iters N]\n",
            why);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

static struct options parse(int argc, char **argv) {
  struct options o = {"allreduce,allgather,reduce_scatter", "default", 1024, (size_t)256 << 20, 0.5, 0.2, 1, 1000};
  for (int i = 1; i < argc; i += 2) {
    const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL) usage("an option without its value");
    if (!strcmp(k, "--ops")) o.ops = v;
    else if (!strcmp(k, "--algo")) o.algo = v;
    else if (!strcmp(k, "--min-bytes")) o.min_bytes = strtoull(v, NULL, 10);
    else if (!strcmp(k, "--max-bytes")) o.max_bytes = strtoull(v, NULL, 10);
    else if (!strcmp(k, "--budget")) o.budget = atof(v);
    else if (!strcmp(k, "--warmup")) o.warmup = atof(v);
    else if (!strcmp(k, "--min-iters")) o.min_iters = atol(v);
    else if (!strcmp(k, "--max-iters")) o.max_iters = atol(v);
    else usage("unknown option");
  }
  if (o.min_bytes == 0 || o.min_bytes > o.max_bytes) usage("need 0 < --min-bytes <= --max-bytes");
  if (o.min_iters < 1 || o.max_iters < o.min_iters) usage("need 1 <= --min-iters <= --max-iters");
  return o;
}

/* What rank r contributes at element g: gloo_bench.cc's values, small integers with exact sums. */
static float contribution(int r, size_t g) { return (float)((g * 7 + (size_t)r * 3) % 11 + 1); }

static float sum_at(size_t g) {
  float s = 0;
  for (int r = 0; r < ranks; r++) s += contribution(r, g);
  return s;
}

enum op { ALLREDUCE, ALLGATHER, REDUCE_SCATTER };

/* One operation at one size: count floats in all (the reduced vector, the gathered output, the input
 * that is reduced and scattered); per = count / ranks. */
struct collective {
  enum op op;
  size_t count, per;
  float *in, *out;
};

static void fill(struct collective *c) {
  size_t n = c->op == ALLGATHER ? c->per : c->count;
  size_t base = c->op == ALLGATHER ? (size_t)rank * c->per : 0;
  for (size_t j = 0; j < n; j++) c->in[j] = contribution(rank, base + j);
}

static void run(struct collective *c) {
  switch (c->op) {
    case ALLREDUCE:
      MPI_Allreduce(c->in, c->out, (int)c->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    case ALLGATHER:
      MPI_Allgather(c->in, (int)c->per, MPI_FLOAT, c->out, (int)c->per, MPI_FLOAT, MPI_COMM_WORLD);
      break;
    case REDUCE_SCATTER:
      MPI_Reduce_scatter_block(c->in, c->out, (int)c->per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
  }
}

static int check(const struct collective *c) {
  switch (c->op) {
    case ALLREDUCE:
      for (size_t g = 0; g < c->count; g++)
        if (c->out[g] != sum_at(g)) return 0;
      return 1;
    case ALLGATHER:
      for (size_t g = 0; g < c->count; g++)
        if (c->out[g] != contribution((int)(g / c->per), g)) return 0;
      return 1;
    case REDUCE_SCATTER:
      for (size_t j = 0; j < c->per; j++)
        if (c->out[j] != sum_at((size_t)rank * c->per + j)) return 0;
      return 1;
  }
  return 0;
}

/* The largest of each rank's six values, on every rank. */
static void agree(double v[6]) { MPI_Allreduce(MPI_IN_PLACE, v, 6, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD); }

struct batches {
  long ops;
  double total, fastest, slowest;
  double *times; /* seconds per operation, max_ops of room */
};

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(struct batches *b) {
  if (b->ops == 0) return 0;
  qsort(b->times, (size_t)b->ops, sizeof(double), by_value);
  return b->times[b->ops / 2];
}

/* gloo_bench.cc's run_batches: batches of 1, 2, 4, ... until the slowest rank spent `seconds` (and
 * min_ops ran) or max_ops ran; the ranks agree after each batch, off the clock. */
static struct batches run_batches(struct collective *c, double seconds, long min_ops, long max_ops, double *times) {
  struct batches b = {0, 0, 1e300, 0, times};
  long batch = 1;
  while (b.ops < max_ops) {
    for (long i = 0; i < batch; i++) {
      double start = MPI_Wtime();
      run(c);
      double t = MPI_Wtime() - start;
      b.total += t;
      if (t < b.fastest) b.fastest = t;
      if (t > b.slowest) b.slowest = t;
      b.times[b.ops + i] = t;
    }
    b.ops += batch;
    double v[6] = {b.total, 0, 0, 0, 0, 0};
    agree(v);
    if (b.ops >= min_ops && v[0] >= seconds) break;
    batch = batch * 2 < max_ops - b.ops ? batch * 2 : max_ops - b.ops;
  }
  return b;
}

/* This process's CPU time so far, user and system (gloo_bench.cc's cpu_seconds). */
static double cpu_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static const char *op_name(enum op op) {
  return op == ALLREDUCE ? "allreduce" : op == ALLGATHER ? "allgather" : "reduce_scatter";
}

static int measure(const struct options *o, enum op op, size_t bytes) {
  struct collective c = {op, bytes / sizeof(float), bytes / sizeof(float) / ranks, NULL, NULL};
  size_t in_floats = op == ALLGATHER ? c.per : c.count;
  size_t out_floats = op == REDUCE_SCATTER ? c.per : c.count;
  c.in = malloc(in_floats * sizeof(float));
  c.out = malloc(out_floats * sizeof(float));
  double *times = malloc((size_t)o->max_iters * sizeof(double));
  if (c.in == NULL || c.out == NULL || times == NULL) {
    fprintf(stderr, "mpi_bench rank %d: out of memory at %zu bytes\n", rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  fill(&c);
  memset(c.out, 0xff, out_floats * sizeof(float)); /* NaNs: a result never written fails the check */

  MPI_Barrier(MPI_COMM_WORLD);
  double start = MPI_Wtime();
  run(&c);
  double first[6] = {MPI_Wtime() - start, check(&c) ? 0 : 1, 0, 0, 0, 0};
  agree(first);
  int ok = first[1] == 0;
  struct batches warm = {0, 0, 0, 0, times};
  if (first[0] < o->warmup) warm = run_batches(&c, o->warmup - first[0], 0, o->max_iters, times);
  double cpu_before = cpu_seconds();
  struct batches timed = run_batches(&c, o->budget, o->min_iters, o->max_iters, times);
  double cpu_per_op = (cpu_seconds() - cpu_before) / timed.ops;
  double slowest[6] = {timed.total / timed.ops, timed.fastest, median(&timed), check(&c) ? 0 : 1, timed.slowest, cpu_per_op};
  agree(slowest);
  ok = ok && slowest[3] == 0;

  if (rank == 0) {
    double factor = op == ALLREDUCE ? 2.0 * (ranks - 1) / ranks : (double)(ranks - 1) / ranks;
    double algbw = bytes * 8 / slowest[0] / 1e9;
    printf("RESULT impl=mpi op=%s algo=%s ranks=%d bytes=%zu warmup=%ld iters=%ld avg_us=%.2f min_us=%.2f "
           "p50_us=%.2f max_us=%.2f cpu_us=%.2f algbw_gbps=%.4f busbw_gbps=%.4f check=%s\n",
           op_name(op), o->algo, ranks, bytes, warm.ops + 1, timed.ops, slowest[0] * 1e6, slowest[1] * 1e6, slowest[2] * 1e6,
           slowest[4] * 1e6, slowest[5] * 1e6, algbw,
           algbw * factor, ok ? "ok" : "FAILED");
    fflush(stdout);
  }
  free(c.in);
  free(c.out);
  free(times);
  return ok;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  struct options o = parse(argc, argv);
  int all_ok = 1;
  char *list = strdup(o.ops);
  for (char *save = NULL, *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
    enum op op = ALLREDUCE;
    if (!strcmp(item, "allreduce")) op = ALLREDUCE;
    else if (!strcmp(item, "allgather")) op = ALLGATHER;
    else if (!strcmp(item, "reduce_scatter")) op = REDUCE_SCATTER;
    else usage("--ops takes allreduce, allgather, reduce_scatter");
    /* Allgather and reduce-scatter split the vector into equal blocks of whole floats. */
    size_t unit = sizeof(float) * (op == ALLREDUCE ? 1 : (size_t)ranks);
    for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
      if (bytes % unit != 0) {
        if (rank == 0) fprintf(stderr, "mpi_bench: %s skips %zu bytes (not a multiple of %zu)\n", item, bytes, unit);
        continue;
      }
      all_ok = measure(&o, op, bytes) && all_ok;
    }
  }
  free(list);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}

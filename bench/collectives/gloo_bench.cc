// Gloo's own collectives over its TCP transport, one process per rank: the Gloo peer of
// bench/collectives.sh. Every rank runs the same command line (but --rank and --addr); rank 0 prints one
// line per operation, algorithm and size, the others print nothing but errors:
//   RESULT impl=gloo op=OP algo=ALGO ranks=N bytes=B warmup=N iters=N avg_us=T min_us=T p50_us=T
//          max_us=T cpu_us=T algbw_gbps=X busbw_gbps=X check=ok|FAILED
// (mpi_bench.c prints the same with impl=mpi, and so will zcnet: bench/collectives.sh reads them all).
//
//   gloo_bench --rank K --ranks N --addr A --store DIR --prefix P [--ops LIST] [--min-bytes B]
//              [--max-bytes B] [--budget S] [--warmup S] [--min-iters N] [--max-iters N] [--timeout S]
//
// Rendezvous: Gloo's FileStore in DIR (the rank namespaces share the file system), keys under P so that
// runs never see each other's keys. Transport: Gloo's TCP device bound to A (this rank's address).
// Data: float32, sum. Sizes: --min-bytes doubling up to --max-bytes; the size of a row is what
// nccl-tests calls the size: the buffer reduced (allreduce), the whole gathered output (allgather), the
// whole input that is reduced and scattered (reduce-scatter).
//
// Operations (--ops, comma-separated, default: all but the *_api ones):
//   allreduce:ring               gloo::AllreduceRing               (in place)
//   allreduce:ring_chunked       gloo::AllreduceRingChunked        (in place)
//   allreduce:halving_doubling   gloo::AllreduceHalvingDoubling    (in place)
//   allreduce:ring_api           gloo::allreduce(), AllreduceOptions::RING (out of place)
//   allgather:ring               gloo::AllgatherRing
//   allgather:api                gloo::allgather()
//   reduce_scatter:halving_doubling  gloo::ReduceScatterHalvingDoubling (in place; Gloo's only one)
//
// Per size: one warm-up operation on fresh data, checked; then more warm-up operations until the slowest
// rank has spent --warmup seconds in warm-up, then timed operations until it has spent --budget seconds
// in them (at least --min-iters, at most --max-iters). They run in batches of 1, 2, 4, ... and the ranks
// agree after each batch, off the clock, whether to go on, so every rank runs the same count and one slow
// operation does not decide it. In-place operations overwrite their input, so every few operations the
// input is filled again, off the clock, and a barrier follows so that it is off every rank's clock (the
// sums grow n-fold per allreduce: refill_every says how often, as zcnet's RankBenchmark does). After
// the timed operations an allreduce or allgather is checked again (an in-place allreduce's expected
// values are the sums times n^(k-1), k operations since the fill); a reduce-scatter only once, since it
// leaves partial sums in the rest of its buffer.
// Times: each rank times each operation; avg = the slowest rank's mean, min = the slowest rank's fastest,
// p50 = the slowest rank's median (the one to read on a machine with fewer cores than ranks, where the
// mean carries the time slices a waiting rank spends off the core), max = the slowest rank's slowest
// operation (max / p50 is the spread), cpu = the largest of the ranks' process CPU time (user and system,
// getrusage) per timed operation.
// algbw = bytes / avg; busbw = algbw * 2(n-1)/n (allreduce) or * (n-1)/n (allgather, reduce-scatter),
// as nccl-tests defines them; in Gbit/s (10^9 bits).

#include <gloo/allgather.h>
#include <gloo/allgather_ring.h>
#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// After how many in-place operations the input is filled again: an allreduce multiplies every value by n,
// and float32 keeps them exact while they are integers below 2^24, the largest sum being 11 n.
int refill_every(int n) {
  long long largest = 11LL * n;
  int k = 1;
  while (k < 16 && largest * n < (1LL << 24)) {
    largest *= n;
    k++;
  }
  return k;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The value rank r contributes at element g of the whole (allreduce, reduce-scatter) or gathered
// (allgather) vector: small integers, so every sum is exact in float32.
float contribution(int r, size_t g) {
  return static_cast<float>((g * 7 + static_cast<size_t>(r) * 3) % 11 + 1);
}

float sum_at(int ranks, size_t g) {
  float s = 0;
  for (int r = 0; r < ranks; r++) s += contribution(r, g);
  return s;
}

struct Options {
  int rank = -1;
  int ranks = 0;
  std::string addr;
  std::string store;
  std::string prefix;
  std::string ops =
      "allreduce:ring,allreduce:ring_chunked,allreduce:halving_doubling,allgather:ring,"
      "reduce_scatter:halving_doubling";
  size_t min_bytes = 1024;
  size_t max_bytes = 256u << 20;
  double budget = 0.5;
  double warmup = 0.2;
  long min_iters = 1;
  long max_iters = 1000;
  double timeout = 600;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "gloo_bench: %s\nusage: gloo_bench --rank K --ranks N --addr A --store DIR --prefix P "
               "[--ops LIST] [--min-bytes B] [--max-bytes B] [--budget S] [--warmup S] "
               "[--min-iters N] [--max-iters N] [--timeout S]\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string k = argv[i];
    if (i + 1 >= argc) usage(("no value after " + k).c_str());
    const char* v = argv[++i];
    if (k == "--rank") o.rank = std::atoi(v);
    else if (k == "--ranks") o.ranks = std::atoi(v);
    else if (k == "--addr") o.addr = v;
    else if (k == "--store") o.store = v;
    else if (k == "--prefix") o.prefix = v;
    else if (k == "--ops") o.ops = v;
    else if (k == "--min-bytes") o.min_bytes = std::strtoull(v, nullptr, 10);
    else if (k == "--max-bytes") o.max_bytes = std::strtoull(v, nullptr, 10);
    else if (k == "--budget") o.budget = std::atof(v);
    else if (k == "--warmup") o.warmup = std::atof(v);
    else if (k == "--min-iters") o.min_iters = std::atol(v);
    else if (k == "--max-iters") o.max_iters = std::atol(v);
    else if (k == "--timeout") o.timeout = std::atof(v);
    else usage(("unknown option " + k).c_str());
  }
  if (o.ranks < 1 || o.rank < 0 || o.rank >= o.ranks) usage("--rank must be in 0..--ranks-1");
  if (o.addr.empty() || o.store.empty() || o.prefix.empty()) usage("--addr, --store and --prefix are required");
  if (o.min_bytes == 0 || o.min_bytes > o.max_bytes) usage("need 0 < --min-bytes <= --max-bytes");
  if (o.min_iters < 1 || o.max_iters < o.min_iters) usage("need 1 <= --min-iters <= --max-iters");
  return o;
}

// One collective at one size: its buffers, fill, run and check. Built per size, so that the buffers
// of 256 MiB exist only while that size runs.
class Collective {
 public:
  Collective(const std::shared_ptr<gloo::Context>& ctx, size_t count)
      : ctx_(ctx), count_(count), per_rank_(count / ctx->size) {}
  virtual ~Collective() = default;
  virtual void fill() = 0;
  virtual void run() = 0;
  // Whether this rank's result is right, k operations after the last fill (k >= 1); rechecks say false
  // from can_recheck when the state after several operations is not known.
  virtual bool check(int k) = 0;
  virtual bool in_place() const = 0;
  virtual bool can_recheck() const = 0;
  const std::shared_ptr<gloo::Context>& context() const { return ctx_; }

 protected:
  std::shared_ptr<gloo::Context> ctx_;
  size_t count_;     // floats in the whole vector
  size_t per_rank_;  // count_ / n: one rank's block
  std::unique_ptr<gloo::Algorithm> impl_;  // Gloo's algorithm object, if the operation has one
};

// Allreduce on one buffer of count floats, in place (the legacy algorithm classes) or out of place
// (gloo::allreduce with separate input and output).
class Allreduce : public Collective {
 public:
  Allreduce(const std::shared_ptr<gloo::Context>& ctx, const std::string& algo, size_t count)
      : Collective(ctx, count), buf_(count), out_(algo == "ring_api" ? count : 0) {
    std::vector<float*> ptrs{buf_.data()};
    const int n = static_cast<int>(count);
    if (algo == "ring") impl_.reset(new gloo::AllreduceRing<float>(ctx, ptrs, n));
    else if (algo == "ring_chunked") impl_.reset(new gloo::AllreduceRingChunked<float>(ctx, ptrs, n));
    else if (algo == "halving_doubling") impl_.reset(new gloo::AllreduceHalvingDoubling<float>(ctx, ptrs, n));
    else if (algo != "ring_api") throw std::runtime_error("no allreduce algorithm " + algo);
  }
  void fill() override {
    for (size_t g = 0; g < count_; g++) buf_[g] = contribution(ctx_->rank, g);
  }
  void run() override {
    if (impl_) {
      impl_->run();
      return;
    }
    gloo::AllreduceOptions opts(ctx_);
    opts.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    opts.setInput(buf_.data(), count_);
    opts.setOutput(out_.data(), count_);
    opts.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    gloo::allreduce(opts);
  }
  bool check(int k) override {
    const std::vector<float>& result = impl_ ? buf_ : out_;
    // In place, every operation after the first sums n equal copies of the last result.
    float scale = 1;
    for (int i = 1; impl_ && i < k; i++) scale *= ctx_->size;
    for (size_t g = 0; g < count_; g++) {
      if (result[g] != sum_at(ctx_->size, g) * scale) return false;
    }
    return true;
  }
  bool in_place() const override { return impl_ != nullptr; }
  bool can_recheck() const override { return true; }

 private:
  std::vector<float> buf_;
  std::vector<float> out_;
};

// Allgather of count floats in all: each rank contributes count / n.
class Allgather : public Collective {
 public:
  Allgather(const std::shared_ptr<gloo::Context>& ctx, const std::string& algo, size_t count)
      : Collective(ctx, count), in_(per_rank_), out_(count) {
    if (algo == "ring") {
      std::vector<const float*> in{in_.data()};
      impl_.reset(new gloo::AllgatherRing<float>(ctx, in, out_.data(), static_cast<int>(per_rank_)));
    } else if (algo != "api") {
      throw std::runtime_error("no allgather algorithm " + algo);
    }
  }
  void fill() override {
    for (size_t j = 0; j < per_rank_; j++) in_[j] = contribution(ctx_->rank, ctx_->rank * per_rank_ + j);
    std::fill(out_.begin(), out_.end(), -1.0f);
  }
  void run() override {
    if (impl_) {
      impl_->run();
      return;
    }
    gloo::AllgatherOptions opts(ctx_);
    opts.setInput(in_.data(), per_rank_);
    opts.setOutput(out_.data(), count_);
    gloo::allgather(opts);
  }
  bool check(int) override {
    for (size_t g = 0; g < count_; g++) {
      if (out_[g] != contribution(static_cast<int>(g / per_rank_), g)) return false;
    }
    return true;
  }
  bool in_place() const override { return false; }
  bool can_recheck() const override { return true; }

 private:
  std::vector<float> in_;
  std::vector<float> out_;
};

// Reduce-scatter of count floats: rank r ends with the sums of block r (count / n floats) at the start
// of its buffer; the rest of the buffer is left as scratch, so only a fresh fill can be checked.
class ReduceScatter : public Collective {
 public:
  ReduceScatter(const std::shared_ptr<gloo::Context>& ctx, const std::string& algo, size_t count)
      : Collective(ctx, count), buf_(count) {
    if (algo != "halving_doubling") throw std::runtime_error("no reduce_scatter algorithm " + algo);
    std::vector<float*> ptrs{buf_.data()};
    std::vector<int> recv(ctx->size, static_cast<int>(per_rank_));
    impl_.reset(new gloo::ReduceScatterHalvingDoubling<float>(ctx, ptrs, static_cast<int>(count), recv));
  }
  void fill() override {
    for (size_t g = 0; g < count_; g++) buf_[g] = contribution(ctx_->rank, g);
  }
  void run() override { impl_->run(); }
  bool check(int) override {
    const size_t base = static_cast<size_t>(ctx_->rank) * per_rank_;
    for (size_t j = 0; j < per_rank_; j++) {
      if (buf_[j] != sum_at(ctx_->size, base + j)) return false;
    }
    return true;
  }
  bool in_place() const override { return true; }
  bool can_recheck() const override { return false; }

 private:
  std::vector<float> buf_;
};

// The largest of each rank's values, element by element, on every rank: how ranks agree on the
// warm-up time, the slowest times and whether any check failed.
class Agree {
 public:
  explicit Agree(const std::shared_ptr<gloo::Context>& ctx)
      : values_(4), impl_(new gloo::AllreduceRing<double>(ctx, {values_.data()}, 4,
                                                          gloo::ReductionFunction<double>::max)) {}
  std::vector<double> max(double a, double b, double c, double d = 0, double e = 0, double f = 0) {
    values_ = {a, b, c, d, e, f};
    impl_->run();
    return values_;
  }

 private:
  std::vector<double> values_;
  std::unique_ptr<gloo::Algorithm> impl_;
};

std::unique_ptr<Collective> make(const std::shared_ptr<gloo::Context>& ctx, const std::string& op,
                                 const std::string& algo, size_t count) {
  if (op == "allreduce") return std::unique_ptr<Collective>(new Allreduce(ctx, algo, count));
  if (op == "allgather") return std::unique_ptr<Collective>(new Allgather(ctx, algo, count));
  if (op == "reduce_scatter") return std::unique_ptr<Collective>(new ReduceScatter(ctx, algo, count));
  throw std::runtime_error("no operation " + op);
}

void barrier(const std::shared_ptr<gloo::Context>& ctx) {
  gloo::BarrierOptions opts(ctx);
  gloo::barrier(opts);
}

// Operations run in batches of 1, 2, 4, ... until the slowest rank has spent `seconds` in them (and at
// least min_ops ran) or max_ops ran; the ranks agree after each batch, off the clock, so that every rank
// runs the same number. In-place operations get a fresh input every refill_every(n) operations, off the clock.
struct Batches {
  long ops = 0;
  double total = 0;          // this rank's seconds in the operations
  double fastest = 1e300;    // this rank's fastest operation
  double slowest = 0;        // and its slowest
  std::vector<double> times;  // this rank's seconds per operation

  double median() {
    if (times.empty()) return 0;
    auto mid = times.begin() + times.size() / 2;
    std::nth_element(times.begin(), mid, times.end());
    return *mid;
  }
};

Batches run_batches(Collective& c, Agree& agree, int& since_fill, double seconds, long min_ops, long max_ops) {
  Batches b;
  long batch = 1;
  const int refill = refill_every(c.context()->size);
  while (b.ops < max_ops) {
    for (long i = 0; i < batch; i++) {
      if (c.in_place() && since_fill == refill) {
        c.fill();
        since_fill = 0;
        barrier(c.context()); // off every rank's clock: a rank done filling first must not time its wait for the rest
      }
      const auto start = Clock::now();
      c.run();
      const double t = seconds_since(start);
      since_fill++;
      b.total += t;
      b.fastest = std::min(b.fastest, t);
      b.slowest = std::max(b.slowest, t);
      b.times.push_back(t);
    }
    b.ops += batch;
    const double slowest = agree.max(b.total, 0, 0)[0];
    if (b.ops >= min_ops && slowest >= seconds) break;
    batch = std::min(batch * 2, max_ops - b.ops);
  }
  return b;
}

// This process's CPU time so far, user and system, all threads (as zcnet's RankBenchmark reports it).
double cpu_seconds() {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Runs op:algo at one size; returns false if a check failed on any rank.
bool measure(const std::shared_ptr<gloo::Context>& ctx, Agree& agree, const Options& o, const std::string& op,
             const std::string& algo, size_t bytes) {
  const int n = ctx->size;
  const size_t count = bytes / sizeof(float);
  std::unique_ptr<Collective> c = make(ctx, op, algo, count);

  // The first operation, on fresh input, is checked and counts as warm-up.
  c->fill();
  barrier(ctx);
  const auto start = Clock::now();
  c->run();
  const double first = seconds_since(start);
  int since_fill = 1;
  const std::vector<double> agreed = agree.max(first, c->check(since_fill) ? 0 : 1, 0);
  bool ok = agreed[1] == 0;
  // More warm-up only while the first operation took less than --warmup (a large size warms up at once).
  const Batches warm =
      agreed[0] < o.warmup ? run_batches(*c, agree, since_fill, o.warmup - agreed[0], 0, o.max_iters) : Batches();
  const double cpu_before = cpu_seconds();
  Batches timed = run_batches(*c, agree, since_fill, o.budget, o.min_iters, o.max_iters);
  const double cpu_per_op = (cpu_seconds() - cpu_before) / timed.ops;
  const bool rechecked = !c->can_recheck() || c->check(since_fill);
  const std::vector<double> slowest = agree.max(timed.total / timed.ops, timed.fastest, timed.median(),
                                                rechecked ? 0 : 1, timed.slowest, cpu_per_op);
  ok = ok && slowest[3] == 0;

  if (ctx->rank == 0) {
    const double factor = op == "allreduce" ? 2.0 * (n - 1) / n : static_cast<double>(n - 1) / n;
    const double algbw = bytes * 8 / slowest[0] / 1e9;
    std::printf(
        "RESULT impl=gloo op=%s algo=%s ranks=%d bytes=%zu warmup=%ld iters=%ld avg_us=%.2f min_us=%.2f "
        "p50_us=%.2f max_us=%.2f cpu_us=%.2f algbw_gbps=%.4f busbw_gbps=%.4f check=%s\n",
        op.c_str(), algo.c_str(), n, bytes, warm.ops + 1, timed.ops, slowest[0] * 1e6, slowest[1] * 1e6,
        slowest[2] * 1e6, slowest[4] * 1e6, slowest[5] * 1e6, algbw,
        algbw * factor, ok ? "ok" : "FAILED");
    std::fflush(stdout);
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = o.addr;
    attr.ai_family = AF_INET;
    auto dev = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore file_store(o.store);
    gloo::rendezvous::PrefixStore store(o.prefix, file_store);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(o.rank, o.ranks);
    ctx->setTimeout(std::chrono::milliseconds(static_cast<long>(o.timeout * 1000)));
    ctx->connectFullMesh(store, dev);
    std::shared_ptr<gloo::Context> base = ctx;
    Agree agree(base);

    bool all_ok = true;
    std::stringstream list(o.ops);
    std::string item;
    while (std::getline(list, item, ',')) {
      const size_t colon = item.find(':');
      if (colon == std::string::npos) usage(("--ops item without ':': " + item).c_str());
      const std::string op = item.substr(0, colon);
      const std::string algo = item.substr(colon + 1);
      // Allgather and reduce-scatter split the vector into n equal blocks of whole floats.
      const size_t unit = sizeof(float) * (op == "allreduce" ? 1 : o.ranks);
      for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= 2) {
        if (bytes % unit != 0) {
          if (o.rank == 0) std::fprintf(stderr, "gloo_bench: %s skips %zu bytes (not a multiple of %zu)\n",
                                        item.c_str(), bytes, unit);
          continue;
        }
        all_ok = measure(base, agree, o, op, algo, bytes) && all_ok;
      }
    }
    barrier(base);
    return all_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gloo_bench rank %d: %s\n", o.rank, e.what());
    return 1;
  }
}

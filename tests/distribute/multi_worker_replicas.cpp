// Run by ctest under `mpirun -np 2`: two workers with two logical CPU devices
// each (4 replicas) train the CNN for 10 steps through the library, and after
// the broadcast and after every step every replica of every worker must hold
// the same weight bits (a hash of each replica's flat parameter buffer,
// gathered from all workers). Without mpirun it fails: it tests the job.
#include "../train/synthetic.hpp"

#include <axon/error.hpp>
#include <axon/nn/model.hpp>
#include <axon/runtime.hpp>
#include <axon/strategy.hpp>
#include <axon/workers.hpp>

#include <cstdio>
#include <cstring>
#include <set>

using namespace axon;

namespace {

// FNV-1a over the buffer's bytes, as text (what the workers exchange).
std::string hash_of(const Tensor& t) {
  const std::vector<float> v = t.to_vector<float>();
  uint64_t h = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  for (size_t i = 0; i < v.size() * sizeof(float); ++i) h = (h ^ p[i]) * 1099511628211ull;
  char text[32];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

// Every replica's hash on this worker, then on all workers; true when all agree.
bool replicas_agree(nn::Sequential& m, Workers& w, const char* when) {
  std::string mine;
  for (int r = 0; r < m.num_replicas(); ++r) mine += hash_of(m.replica(r).buffers().values()) + " ";
  std::set<std::string> distinct;
  std::string all;
  for (const std::string& s : w.all_gather(mine, 60)) {
    all += s;
    for (size_t i = 0; i + 16 <= s.size(); i += 17) distinct.insert(s.substr(i, 16));
  }
  if (w.rank() == 0) std::printf("%s: %s-> %s\n", when, all.c_str(), distinct.size() == 1 ? "the same" : "DIFFER");
  return distinct.size() == 1;
}

}  // namespace

int main() {
  try {
    std::unique_ptr<Workers> workers = Workers::join();
    if (!workers->launched() || workers->size() != 2) {
      std::printf("FAIL: run me under mpirun -np 2 (launched: %d, size %d)\n", workers->launched(), workers->size());
      return 1;
    }
    Config c;
    c.cpu_devices = 2;
    c.threads = 2;
    Runtime& rt = Runtime::init(c);
    std::unique_ptr<Strategy> strategy = make_multi_worker_strategy(mirrored_devices(rt), *workers, 60);
    if (strategy->num_replicas_in_sync() != 4) {
      std::printf("FAIL: %d replicas in sync, expected 4\n", strategy->num_replicas_in_sync());
      return 1;
    }
    auto model = nn::make_cnn(10);
    model->build({28, 28, 1}, *strategy, 3);
    model->compile();
    bool ok = replicas_agree(*model, *workers, "after the broadcast");
    const data::ImageSet set = test::synthetic_set(640, 21);  // the same on every worker
    for (int step = 0; step < 10; ++step) {
      model->train_step(test::batch_of(set, step * 64, 64));
      const std::string when = "after step " + std::to_string(step + 1);
      ok = replicas_agree(*model, *workers, when.c_str()) && ok;
    }
    if (workers->rank() == 0) std::printf("%s\n", ok ? "PASS" : "FAIL: replicas hold different weights");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
}

#include "comm_binding.h"

#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "buffer_view.h"
#include "cuda_streams.h"
#include "errors.h"
#include "op_route.h"

namespace py = pybind11;
using namespace pybind11::literals;

namespace slimeccl_python {
namespace {

class Comm {
 public:
  explicit Comm(slimecclComm_t comm) : comm_(comm) {
    slimecclCommUserRank(comm_, &rank_);
    slimecclCommCount(comm_, &size_);
  }
  ~Comm() {
    if (comm_ != nullptr) slimecclCommDestroy(comm_);
  }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool alive() const { return comm_ != nullptr; }

  // The handle, or slimeccl.Error naming the op when the comm was destroyed or aborted.
  slimecclComm_t handle(const std::string& op) const {
    if (comm_ == nullptr)
      raise(slimecclInvalidUsage, "rank " + std::to_string(rank_) + ": " + op + ": the communicator was destroyed");
    return comm_;
  }
  void destroy() { release("destroy", slimecclCommDestroy); }
  void abort() { release("abort", slimecclCommAbort); }

  std::string opName(const char* op) const { return "rank " + std::to_string(rank_) + ": " + op; }

 private:
  // Frees the communicator by destroy or abort (which may wait for peers: without the GIL).
  void release(const char* what, slimecclResult_t (*call)(slimecclComm_t)) {
    slimecclComm_t comm = handle(what);
    comm_ = nullptr;
    slimecclResult_t rc;
    {
      py::gil_scoped_release released;
      rc = call(comm);
    }
    check(rc, nullptr);
  }

  slimecclComm_t comm_;
  int rank_ = -1;
  int size_ = 0;
};

slimecclConfig_t configOf(std::optional<int> timeoutMs, const std::optional<std::string>& net,
                          const std::optional<std::string>& name, std::optional<int> cudaDevice) {
  slimecclConfig_t config = SLIMECCL_CONFIG_INITIALIZER;
  if (timeoutMs) config.timeoutMs = *timeoutMs;
  if (net) config.netName = net->c_str();
  if (name) config.commName = name->c_str();
  if (cudaDevice) config.cudaDevice = *cudaDevice;
  return config;
}

std::unique_ptr<Comm> makeComm(int nranks, const py::bytes& uniqueId, int rank, std::optional<int> timeoutMs,
                               std::optional<std::string> net, std::optional<std::string> name,
                               std::optional<int> cudaDevice) {
  std::string id = uniqueId;
  if (id.size() != SLIMECCL_UNIQUE_ID_BYTES)
    raise(slimecclInvalidArgument, "rank " + std::to_string(rank) + ": init: the unique id has " +
                                       std::to_string(id.size()) + " bytes where " +
                                       std::to_string(SLIMECCL_UNIQUE_ID_BYTES) + " are expected");
  slimecclUniqueId uid;
  memcpy(uid.internal, id.data(), sizeof(uid.internal));
  slimecclConfig_t config = configOf(timeoutMs, net, name, cudaDevice);
  slimecclComm_t comm = nullptr;
  slimecclResult_t rc;
  {
    py::gil_scoped_release released;
    rc = slimecclCommInitRankConfig(&comm, nranks, uid, rank, &config);
  }
  check(rc, nullptr);
  return std::make_unique<Comm>(comm);
}

std::unique_ptr<Comm> split(Comm& self, std::optional<int> color, std::optional<int> key,
                            std::optional<int> timeoutMs) {
  slimecclComm_t parent = self.handle("split");
  slimecclConfig_t config = configOf(timeoutMs, std::nullopt, std::nullopt, std::nullopt);
  slimecclComm_t comm = nullptr;
  slimecclResult_t rc;
  {
    py::gil_scoped_release released;
    rc = slimecclCommSplit(parent, color.value_or(SLIMECCL_SPLIT_NOCOLOR), key.value_or(self.rank()), &comm, &config);
  }
  check(rc, parent);
  if (comm == nullptr) return nullptr;
  return std::make_unique<Comm>(comm);
}

// Runs one call with the GIL released, then raises the comm's sentence if it failed.
template <typename Call>
void run(slimecclComm_t comm, Call&& call) {
  slimecclResult_t rc;
  {
    py::gil_scoped_release released;
    rc = call();
  }
  check(rc, comm);
}

const char* typeName(slimecclDataType_t type) {
  static const char* const names[] = {"int8",   "uint8",   "int32",   "uint32",  "int64",
                                      "uint64", "float16", "float32", "float64", "bfloat16"};
  return type >= 0 && type < slimecclNumTypes ? names[type] : "an unknown datatype";
}

void sameType(const std::string& op, const BufferView& send, const BufferView& recv) {
  if (send.type != recv.type)
    raise(slimecclInvalidArgument,
          op + ": the send buffer holds " + typeName(send.type) + " and the recv buffer " + typeName(recv.type));
}

void needCount(const std::string& op, const char* what, size_t have, size_t need) {
  if (have != need)
    raise(slimecclInvalidArgument, op + ": the " + what + " buffer holds " + std::to_string(have) + " elements where " +
                                       std::to_string(need) + " are needed");
}

// count elements over size ranks: send holds size blocks of count (AlltoAll, ReduceScatter).
size_t blockOf(const std::string& op, size_t total, int size) {
  if (total % static_cast<size_t>(size) != 0)
    raise(slimecclInvalidArgument, op + ": the send buffer's " + std::to_string(total) +
                                       " elements do not split into " + std::to_string(size) + " equal blocks");
  return total / static_cast<size_t>(size);
}

slimecclStream_t streamOf(const py::handle& stream, const BufferView& a, const char* op) {
  return streamFor(stream, a.onCuda, op);
}

void allGather(Comm& self, const py::handle& send, const py::handle& recv, const py::handle& stream) {
  const std::string op = self.opName("AllGather");
  slimecclComm_t comm = self.handle(op);
  BufferView s = viewOf(send, op, "send", false), r = viewOf(recv, op, "recv", true);
  sameType(op, s, r);
  needCount(op, "recv", r.count, s.count * self.size());
  slimecclStream_t st = streamOf(stream, r, "AllGather");
  run(comm, [&] { return slimecclAllGather(s.data, r.data, s.count, s.type, comm, st); });
}

void allReduce(Comm& self, const py::handle& send, const py::handle& recv, slimecclRedOp_t redOp,
               const py::handle& stream) {
  const std::string op = self.opName("AllReduce");
  slimecclComm_t comm = self.handle(op);
  BufferView s = viewOf(send, op, "send", false), r = viewOf(recv, op, "recv", true);
  sameType(op, s, r);
  needCount(op, "recv", r.count, s.count);
  slimecclStream_t st = streamOf(stream, r, "AllReduce");
  run(comm, [&] { return slimecclAllReduce(s.data, r.data, s.count, s.type, redOp, comm, st); });
}

void reduceScatter(Comm& self, const py::handle& send, const py::handle& recv, slimecclRedOp_t redOp,
                   const py::handle& stream) {
  const std::string op = self.opName("ReduceScatter");
  slimecclComm_t comm = self.handle(op);
  BufferView s = viewOf(send, op, "send", false), r = viewOf(recv, op, "recv", true);
  sameType(op, s, r);
  needCount(op, "recv", r.count, blockOf(op, s.count, self.size()));
  slimecclStream_t st = streamOf(stream, r, "ReduceScatter");
  run(comm, [&] { return slimecclReduceScatter(s.data, r.data, r.count, s.type, redOp, comm, st); });
}

void allToAll(Comm& self, const py::handle& send, const py::handle& recv, const py::handle& stream) {
  const std::string op = self.opName("AlltoAll");
  slimecclComm_t comm = self.handle(op);
  BufferView s = viewOf(send, op, "send", false), r = viewOf(recv, op, "recv", true);
  sameType(op, s, r);
  needCount(op, "recv", r.count, s.count);
  const size_t block = blockOf(op, s.count, self.size());
  slimecclStream_t st = streamOf(stream, r, "AlltoAll");
  run(comm, [&] { return slimecclAlltoAll(s.data, r.data, block, s.type, comm, st); });
}

// Rooted ops: only the root reads send (Broadcast) or writes recv (Reduce); the others may pass None.
void broadcast(Comm& self, const py::handle& send, const py::handle& recv, int root, const py::handle& stream) {
  const std::string op = self.opName("Broadcast");
  slimecclComm_t comm = self.handle(op);
  BufferView r = viewOf(recv, op, "recv", true);
  BufferView s = r;
  if (self.rank() == root && !send.is_none()) {
    s = viewOf(send, op, "send", false);
    sameType(op, s, r);
    needCount(op, "send", s.count, r.count);
  }
  slimecclStream_t st = streamOf(stream, r, "Broadcast");
  run(comm, [&] { return slimecclBroadcast(s.data, r.data, r.count, r.type, root, comm, st); });
}

void reduce(Comm& self, const py::handle& send, const py::handle& recv, int root, slimecclRedOp_t redOp,
            const py::handle& stream) {
  const std::string op = self.opName("Reduce");
  slimecclComm_t comm = self.handle(op);
  BufferView s = viewOf(send, op, "send", false);
  BufferView r = s;
  if (self.rank() == root || !recv.is_none()) {
    r = viewOf(recv, op, "recv", true);
    sameType(op, s, r);
    needCount(op, "recv", r.count, s.count);
  }
  slimecclStream_t st = streamOf(stream, s, "Reduce");
  run(comm, [&] {
    return slimecclReduce(s.data, self.rank() == root ? r.data : nullptr, s.count, s.type, redOp, root, comm, st);
  });
}

void sendTo(Comm& self, const py::handle& buf, int peer, const py::handle& stream) {
  const std::string op = self.opName("Send");
  slimecclComm_t comm = self.handle(op);
  BufferView b = viewOf(buf, op, "send", false);
  slimecclStream_t st = streamOf(stream, b, "Send");
  run(comm, [&] { return slimecclSend(b.data, b.count, b.type, peer, comm, st); });
}

void recvFrom(Comm& self, const py::handle& buf, int peer, const py::handle& stream) {
  const std::string op = self.opName("Recv");
  slimecclComm_t comm = self.handle(op);
  BufferView b = viewOf(buf, op, "recv", true);
  slimecclStream_t st = streamOf(stream, b, "Recv");
  run(comm, [&] { return slimecclRecv(b.data, b.count, b.type, peer, comm, st); });
}

// A 2-D buffer, or slimecclInvalidArgument naming it.
void needMatrix(const std::string& op, const BufferView& v, const char* what) {
  if (v.shape.size() != 2)
    raise(slimecclInvalidArgument,
          op + ": " + what + " has " + std::to_string(v.shape.size()) + " dimensions where a matrix has 2");
}

std::string shapeText(const BufferView& v) { return std::to_string(v.shape[0]) + "x" + std::to_string(v.shape[1]); }

// C = AllGather(A) x B on 2-D row-major buffers: a_local (m_local x k), b (k x n), c (size*m_local x n).
void allGatherGemm(Comm& self, const py::handle& aLocal, const py::handle& b, const py::handle& c,
                   const py::handle& aGathered, const py::handle& stream) {
  const std::string op = self.opName("AllGatherGemm");
  slimecclComm_t comm = self.handle(op);
  BufferView a = viewOf(aLocal, op, "a_local", false), bv = viewOf(b, op, "b", false), cv = viewOf(c, op, "c", true);
  for (const BufferView* v : {&bv, &cv}) sameType(op, a, *v);
  needMatrix(op, a, "a_local");
  needMatrix(op, bv, "b");
  needMatrix(op, cv, "c");
  const size_t mLocal = a.shape[0], k = a.shape[1], n = bv.shape[1];
  if (static_cast<size_t>(bv.shape[0]) != k || static_cast<size_t>(cv.shape[0]) != mLocal * self.size() ||
      static_cast<size_t>(cv.shape[1]) != n)
    raise(slimecclInvalidArgument, op + ": shapes a_local " + shapeText(a) + ", b " + shapeText(bv) + ", c " +
                                       shapeText(cv) + " do not make C = AllGather(A) x B over " +
                                       std::to_string(self.size()) + " ranks");
  BufferView gathered;
  if (!aGathered.is_none()) {
    gathered = viewOf(aGathered, op, "a_gathered", true);
    sameType(op, a, gathered);
    needCount(op, "a_gathered", gathered.count, a.count * self.size());
  }
  slimecclStream_t st = streamOf(stream, a, "AllGatherGemm");
  run(comm,
      [&] { return slimecclAllGatherGemm(a.data, gathered.data, bv.data, cv.data, mLocal, n, k, a.type, comm, st); });
}

// C = this rank's rows of ReduceScatter(A x B) on 2-D row-major buffers: a (size*m_local x k),
// b (k x n), c (m_local x n).
void gemmReduceScatter(Comm& self, const py::handle& aAll, const py::handle& b, const py::handle& c,
                       slimecclRedOp_t redOp, const py::handle& stream) {
  const std::string op = self.opName("GemmReduceScatter");
  slimecclComm_t comm = self.handle(op);
  BufferView a = viewOf(aAll, op, "a", false), bv = viewOf(b, op, "b", false), cv = viewOf(c, op, "c", true);
  for (const BufferView* v : {&bv, &cv}) sameType(op, a, *v);
  needMatrix(op, a, "a");
  needMatrix(op, bv, "b");
  needMatrix(op, cv, "c");
  const size_t mLocal = cv.shape[0], k = a.shape[1], n = bv.shape[1];
  if (static_cast<size_t>(bv.shape[0]) != k || static_cast<size_t>(a.shape[0]) != mLocal * self.size() ||
      static_cast<size_t>(cv.shape[1]) != n)
    raise(slimecclInvalidArgument, op + ": shapes a " + shapeText(a) + ", b " + shapeText(bv) + ", c " + shapeText(cv) +
                                       " do not make C = ReduceScatter(A x B) over " + std::to_string(self.size()) +
                                       " ranks");
  slimecclStream_t st = streamOf(stream, a, "GemmReduceScatter");
  run(comm, [&] { return slimecclGemmReduceScatter(a.data, bv.data, cv.data, mLocal, n, k, a.type, redOp, comm, st); });
}

// {"op": "AllReduce", "route": "net", "algorithm": "ring", "seq": 3} for the last started op.
py::dict lastOpRoute(Comm& self) {
  slimecclComm_t comm = self.handle(self.opName("CommGetLastOpRoute"));
  slimecclOpRoute route;
  check(slimecclCommGetLastOpRoute(comm, &route), comm);
  return opRouteDict(route);
}

}  // namespace

void defineComm(py::module_& m) {
  py::class_<Comm>(m, "Comm",
                   "One rank's communicator (slimecclComm_t). Collectives take buffers through the "
                   "buffer protocol or DLPack; counts and the datatype come from the buffers.")
      .def(py::init(&makeComm), "nranks"_a, "unique_id"_a, "rank"_a, py::kw_only(), "timeout_ms"_a = py::none(),
           "net"_a = py::none(), "name"_a = py::none(), "cuda_device"_a = py::none(),
           "Joins the communicator of `unique_id` (bytes from get_unique_id) as `rank` of `nranks`.")
      .def_property_readonly("rank", &Comm::rank)
      .def_property_readonly("size", &Comm::size)
      .def_property_readonly("alive", &Comm::alive, "False once destroyed or aborted")
      .def("split", &split, "color"_a, "key"_a = py::none(), py::kw_only(), "timeout_ms"_a = py::none(),
           "A new communicator of the ranks that pass the same color, ordered by key (default: rank); "
           "None for color None. Every rank of this communicator calls it.")
      .def("destroy", &Comm::destroy, "Waits for this rank's queued ops, then frees the communicator.")
      .def("abort", &Comm::abort, "Frees the communicator at once; ops in flight on it fail.")
      .def(
          "__enter__", [](Comm& self) -> Comm& { return self; }, py::return_value_policy::reference)
      .def("__exit__",
           [](Comm& self, py::args) {
             if (self.alive()) self.destroy();
           })
      .def("all_gather", &allGather, "send"_a, "recv"_a, py::kw_only(), "stream"_a = py::none())
      .def("all_reduce", &allReduce, "send"_a, "recv"_a, "op"_a = slimecclSum, py::kw_only(), "stream"_a = py::none())
      .def("reduce_scatter", &reduceScatter, "send"_a, "recv"_a, "op"_a = slimecclSum, py::kw_only(),
           "stream"_a = py::none())
      .def("all_to_all", &allToAll, "send"_a, "recv"_a, py::kw_only(), "stream"_a = py::none())
      .def("broadcast", &broadcast, "send"_a, "recv"_a, "root"_a, py::kw_only(), "stream"_a = py::none())
      .def("reduce", &reduce, "send"_a, "recv"_a, "root"_a, "op"_a = slimecclSum, py::kw_only(),
           "stream"_a = py::none())
      .def("all_gather_gemm", &allGatherGemm, "a_local"_a, "b"_a, "c"_a, py::kw_only(), "a_gathered"_a = py::none(),
           "stream"_a = py::none(),
           "c = AllGather(a_local) @ b, each block's GEMM running as it lands; 2-D row-major matrices; "
           "a_gathered, when given, receives the gathered A.")
      .def("gemm_reduce_scatter", &gemmReduceScatter, "a"_a, "b"_a, "c"_a, "op"_a = slimecclSum, py::kw_only(),
           "stream"_a = py::none(),
           "c = this rank's rows of ReduceScatter(a @ b), each block's GEMM running while the blocks before it "
           "are reduced; 2-D row-major matrices, a of size * c's rows.")
      .def("last_op_route", &lastOpRoute,
           "How this rank's last started op ran: {'op', 'route' (net, shared_slots, eager, gpu_to_gpu, host_tiers), "
           "'algorithm', 'seq'} (slimecclCommGetLastOpRoute).")
      .def("send", &sendTo, "buf"_a, "peer"_a, py::kw_only(), "stream"_a = py::none())
      .def("recv", &recvFrom, "buf"_a, "peer"_a, py::kw_only(), "stream"_a = py::none());
}

}  // namespace slimeccl_python

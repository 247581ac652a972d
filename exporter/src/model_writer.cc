#include "model_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include "parity/error.h"
#include "parity/fs.h"
#include "parity/internal/onnx_tensor.h"

namespace parity::exporter {

namespace {

namespace fs = std::filesystem;

constexpr const char* kPendingLocation = "parity:pending";
constexpr size_t kChunkBytes = size_t{8} << 20;

class Sink {
 public:
  virtual ~Sink() = default;
  virtual void write(const void* data, size_t n) = 0;
  uint64_t position() const { return position_; }

 protected:
  uint64_t position_ = 0;
};

class StringSink : public Sink {
 public:
  explicit StringSink(std::string& out) : out_(out) {}
  void write(const void* data, size_t n) override {
    out_.append(static_cast<const char*>(data), n);
    position_ += n;
  }

 private:
  std::string& out_;
};

// Unbuffered writes to a file descriptor (the payloads come in large chunks; the rest is a few strings).
class FileSink : public Sink {
 public:
  FileSink(const std::string& path, const std::string& shown) : shown_(shown) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error({"export", shown_}, std::string("cannot create file: ") + std::strerror(errno));
  }
  ~FileSink() override {
    if (fd_ >= 0) ::close(fd_);
  }
  void write(const void* data, size_t n) override {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) throw Error({"export", shown_}, std::string("write failed: ") + std::strerror(errno));
      p += w;
      n -= static_cast<size_t>(w);
      position_ += static_cast<uint64_t>(w);
    }
  }
  void close() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw Error({"export", shown_}, std::string("write failed: ") + std::strerror(errno));
  }

 private:
  int fd_ = -1;
  std::string shown_;
};

size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) v >>= 7, ++n;
  return n;
}

void put_varint(Sink& sink, uint64_t v) {
  unsigned char buf[10];
  size_t n = 0;
  while (v >= 0x80) buf[n++] = static_cast<unsigned char>(v | 0x80), v >>= 7;
  buf[n++] = static_cast<unsigned char>(v);
  sink.write(buf, n);
}

// A length-delimited field's tag: (field number << 3) | wire type 2.
void put_tag(Sink& sink, uint32_t field) { put_varint(sink, (uint64_t{field} << 3) | 2); }

// Writes `n` bytes in chunks; pages of a memory-mapped source are handed back once written, so a
// weight streamed from the .pt2 is resident only one chunk at a time.
void stream_bytes(Sink& sink, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  size_t done = 0;
  while (done < n) {
    // Chunks end on page boundaries of the source so that every page is released once, whole.
    const uintptr_t end_address = (reinterpret_cast<uintptr_t>(p + done) + kChunkBytes) / page * page;
    size_t len = static_cast<size_t>(end_address - reinterpret_cast<uintptr_t>(p + done));
    if (len == 0 || len > n - done) len = n - done;
    sink.write(p + done, len);
    MappedFile::release_pages(p + done, len);
    done += len;
  }
}

struct Payload {
  const void* data = nullptr;
  size_t bytes = 0;
};

const Tensor& payload_tensor(const onnx::TensorProto& t, size_t index, const std::vector<Tensor>& payloads) {
  if (index >= payloads.size())
    throw Error({"export"},
                "internal: initializer '" + t.name() + "' refers to missing payload " + std::to_string(index));
  return payloads[index];
}

void clear_pending(onnx::TensorProto* t) {
  t->clear_external_data();
  t->clear_data_location();
}

// Subgraph initializers (rare, small) get their bytes inline; only the root graph's are streamed.
void materialize_nested(onnx::GraphProto& g, const std::vector<Tensor>& payloads, bool nested) {
  if (nested)
    for (auto& t : *g.mutable_initializer())
      if (const auto index = pending_payload(t)) {
        const Tensor& value = payload_tensor(t, *index, payloads);
        const std::string name = t.name();
        tensor_to_proto(value, name, &t);
      }
  for (auto& n : *g.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) materialize_nested(*a.mutable_g(), payloads, true);
      for (auto& sub : *a.mutable_graphs()) materialize_nested(sub, payloads, true);
    }
}

uint64_t estimated_size(const onnx::ModelProto& model, const std::vector<Tensor>& payloads) {
  uint64_t total = model.ByteSizeLong();
  for (const auto& t : model.graph().initializer())
    if (const auto index = pending_payload(t)) total += payload_tensor(t, *index, payloads).nbytes() + 16;
  return total;
}

// Appends `p` to the data file and makes `t` refer to it (location, offset, length).
void write_external(onnx::TensorProto& t, const Payload& p, Sink& data_sink, const std::string& location) {
  // 64 KiB (mmap allocation granularity on every OS) for large tensors, a cache line for the rest.
  const uint64_t align = p.bytes >= (uint64_t{1} << 20) ? 65536 : 64;
  const uint64_t offset = (data_sink.position() + align - 1) / align * align;
  static const char zeros[65536] = {};
  data_sink.write(zeros, static_cast<size_t>(offset - data_sink.position()));
  stream_bytes(data_sink, p.data, p.bytes);
  t.clear_raw_data();
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    auto* kv = t.add_external_data();
    kv->set_key(key);
    kv->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(p.bytes));
}

// The core: writes `model` to `onnx_sink`; with `data_sink`, initializers of at least `threshold`
// bytes go there instead (offsets aligned), referenced by `location`. Returns how many did.
size_t write_model(onnx::ModelProto& model, const std::vector<Tensor>& payloads, Sink& onnx_sink, Sink* data_sink,
                   const std::string& location, uint64_t threshold, const std::string& origin) {
  materialize_nested(*model.mutable_graph(), payloads, false);
  onnx::GraphProto graph;
  graph.Swap(model.mutable_graph());
  model.clear_graph();
  google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
  initializers.Swap(graph.mutable_initializer());

  // Pass 1: each initializer's bytes, to the data file or kept for inline streaming.
  std::vector<Payload> inline_payloads(static_cast<size_t>(initializers.size()));
  size_t external = 0;
  for (int i = 0; i < initializers.size(); ++i) {
    onnx::TensorProto& t = initializers[i];
    Payload p;
    const auto index = pending_payload(t);
    if (index) {
      const Tensor& value = payload_tensor(t, *index, payloads);
      p = {value.raw(), value.nbytes()};
      clear_pending(&t);
    } else if (t.has_raw_data() && t.data_location() != onnx::TensorProto::EXTERNAL) {
      p = {t.raw_data().data(), t.raw_data().size()};
    }
    if (data_sink && p.bytes > 0 && p.bytes >= threshold) {
      write_external(t, p, *data_sink, location);
      ++external;
    } else if (index) {
      inline_payloads[static_cast<size_t>(i)] = p;  // streamed after the tensor's other fields
    }
  }

  // Pass 2: the model as protobuf wire format, the graph (field 7) last and in it the initializers
  // (field 5) last, each pending payload as the tensor's raw_data (field 9) after its other fields.
  // Field order is free in protobuf; every parser reads this as the same message.
  const std::string model_rest = model.SerializeAsString();
  const std::string graph_rest = graph.SerializeAsString();
  std::vector<std::string> tensor_rest(static_cast<size_t>(initializers.size()));
  std::vector<uint64_t> tensor_size(tensor_rest.size());
  uint64_t graph_size = graph_rest.size();
  for (size_t i = 0; i < tensor_rest.size(); ++i) {
    tensor_rest[i] = initializers[static_cast<int>(i)].SerializeAsString();
    const uint64_t n = inline_payloads[i].bytes;
    tensor_size[i] = tensor_rest[i].size() + (n > 0 ? 1 + varint_size(n) + n : 0);
    graph_size += 1 + varint_size(tensor_size[i]) + tensor_size[i];
  }
  const uint64_t total = model_rest.size() + 1 + varint_size(graph_size) + graph_size;
  if (total > kProtobufLimit)
    throw Error({"export", origin}, "the ONNX model is " + std::to_string(total) +
                                        " bytes, over protobuf's 2 GiB limit; write its weights as external data "
                                        "(parity export --external-data)");
  onnx_sink.write(model_rest.data(), model_rest.size());
  put_tag(onnx_sink, 7);
  put_varint(onnx_sink, graph_size);
  onnx_sink.write(graph_rest.data(), graph_rest.size());
  for (size_t i = 0; i < tensor_rest.size(); ++i) {
    put_tag(onnx_sink, 5);
    put_varint(onnx_sink, tensor_size[i]);
    onnx_sink.write(tensor_rest[i].data(), tensor_rest[i].size());
    if (const uint64_t n = inline_payloads[i].bytes) {
      put_tag(onnx_sink, 9);
      put_varint(onnx_sink, n);
      stream_bytes(onnx_sink, inline_payloads[i].data, static_cast<size_t>(n));
    }
  }
  // Back into the model (inline payloads stay references; external ones now point at the data file).
  initializers.Swap(graph.mutable_initializer());
  graph.Swap(model.mutable_graph());
  return external;
}

// Removes the temporary files unless dismissed.
struct TempFiles {
  std::vector<std::string> paths;
  ~TempFiles() {
    std::error_code ec;
    for (const auto& p : paths) fs::remove(p, ec);
  }
};

}  // namespace

void set_pending_payload(onnx::TensorProto* proto, size_t index) {
  proto->clear_raw_data();
  proto->clear_external_data();
  proto->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = proto->add_external_data();
  kv->set_key("location");
  kv->set_value(kPendingLocation);
  kv = proto->add_external_data();
  kv->set_key("offset");
  kv->set_value(std::to_string(index));
}

std::optional<size_t> pending_payload(const onnx::TensorProto& proto) {
  if (proto.data_location() != onnx::TensorProto::EXTERNAL || proto.external_data_size() != 2 ||
      proto.external_data(0).value() != kPendingLocation)
    return std::nullopt;
  const std::string& text = proto.external_data(1).value();
  size_t index = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return index;
}

std::string serialize_model(onnx::ModelProto& model, const std::vector<Tensor>& payloads, const std::string& origin) {
  std::string out;
  StringSink sink(out);
  write_model(model, payloads, sink, nullptr, "", 0, origin);
  return out;
}

bool write_model_file(onnx::ModelProto& model, const std::vector<Tensor>& payloads, const std::string& onnx_path,
                      const ModelWriteOptions& options) {
  const fs::path target(onnx_path);
  const std::string data_name =
      options.external_data_file.empty() ? target.filename().string() + ".data" : options.external_data_file;
  const fs::path rel(data_name);
  if (data_name.empty() || data_name == "." || data_name == ".." || rel.has_parent_path() || rel.is_absolute())
    throw Error(
        {"export", onnx_path},
        "external data file name '" + data_name + "' must be a plain file name (it is written next to the .onnx file)",
        ErrorKind::kUsage);
  if (data_name == target.filename().string())
    throw Error({"export", onnx_path}, "external data file name '" + data_name + "' is the model's own name",
                ErrorKind::kUsage);
  const bool external = options.external_data || estimated_size(model, payloads) > options.auto_external_bytes;

  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const fs::path data_path = target.parent_path() / data_name;
  const std::string suffix = ".tmp." + std::to_string(::getpid());
  TempFiles temps;
  temps.paths = {onnx_path + suffix};
  if (external) temps.paths.push_back(data_path.string() + suffix);

  FileSink onnx_sink(temps.paths[0], onnx_path);
  std::unique_ptr<FileSink> data_sink;
  if (external) data_sink = std::make_unique<FileSink>(temps.paths[1], data_path.string());
  const size_t written =
      write_model(model, payloads, onnx_sink, data_sink.get(), data_name, options.external_threshold, onnx_path);
  onnx_sink.close();
  if (data_sink) data_sink->close();
  // The data file first: once the .onnx is in place, what it refers to is there too.
  if (written > 0) {
    fs::rename(temps.paths[1], data_path, ec);
    if (ec) throw Error({"export", data_path.string()}, "cannot move temporary file into place: " + ec.message());
  }
  fs::rename(temps.paths[0], target, ec);
  if (ec) {
    const std::string why = ec.message();
    if (written > 0) fs::remove(data_path, ec);
    throw Error({"export", onnx_path}, "cannot move temporary file into place: " + why);
  }
  return written > 0;
}

}  // namespace parity::exporter

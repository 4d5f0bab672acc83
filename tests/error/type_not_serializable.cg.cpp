// A type crossing actors must be serializable: cgc names the member that is
// not, once per type, with advice that fits it, and a note at the member.
#include <cg/cg.hpp>

#include <cstdio>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <vector>

struct Meta {
  int version;
  std::FILE* handle;  // expected-note {{'Meta::handle' is declared here}}
};
struct Request {
  std::string id;
  Meta meta;
};

struct Frame {
  const float* pixels;  // expected-note {{'Frame::pixels' is declared here}}
  int size;
};

struct Job {
  std::function<int(int)> step;  // expected-note {{'Job::step' is declared here}}
};

struct CG_ACTOR Loader {
  Request load(int n) { return {std::to_string(n), {1, nullptr}}; }  // expected-note {{'Loader::load' returns it}}
  int size(Request r) { return static_cast<int>(r.id.size()); }
  int frame_size(Frame f) { return f.size; }
  int run(Job job) { return job.step(1); }
};

CG_GRAPH void loading(cg::GraphBuilder& g) {
  auto a = g.actor<Loader>("a");
  auto b = g.actor<Loader>("b");
  g.output(b.bind<&Loader::size>(a.bind<&Loader::load>(g.input<int>())));  // expected-error {{type 'Request' cannot be sent between actors: 'Request::meta.handle' is a 'std::FILE *': a pointer cannot be sent, its address means nothing in another process; send what it points to (a std::vector or a std::string; a method reads one in place through a std::span or std::string_view parameter)}}
}

// The same type used twice is one mistake: one error, at its first use.
CG_GRAPH void twice(cg::GraphBuilder& g) {
  auto a = g.actor<Loader>("a");
  auto frame = g.input<Frame>();  // expected-error {{type 'Frame' cannot be sent between actors: 'Frame::pixels' is a 'const float *': a pointer cannot be sent, its address means nothing in another process; send what it points to (a std::vector or a std::string; a method reads one in place through a std::span or std::string_view parameter)}}
  auto once = a.bind<&Loader::frame_size>(frame);
  auto again = a.bind<&Loader::frame_size>(frame);
  g.output(once, again);
}

CG_GRAPH void code(cg::GraphBuilder& g) {
  auto a = g.actor<Loader>("a");
  g.output(a.bind<&Loader::run>(g.input<Job>()));  // expected-error {{type 'Job' cannot be sent between actors: 'Job::step' is a 'std::function<int (int)>': code cannot be sent between processes; send the data it needs, and call the function in the method that receives it}}
}

// Standard types: a smart pointer gets pointer advice, and a container
// without a codec the list of those with one; the note names the method.
struct CG_ACTOR Maker {
  std::unique_ptr<std::vector<float>> make(int n) { return std::make_unique<std::vector<float>>(n); }  // expected-note {{'Maker::make' returns it}}
  int count(std::unique_ptr<std::vector<float>> v) { return static_cast<int>(v->size()); }
  std::list<int> keys(int n) { return {n}; }  // expected-note {{'Maker::keys' returns it}}
  int size(std::list<int> s) { return static_cast<int>(s.size()); }
};

CG_GRAPH void standard(cg::GraphBuilder& g) {
  auto a = g.actor<Maker>("a");
  auto b = g.actor<Maker>("b");
  auto owned = a.bind<&Maker::make>(g.input<int>());  // expected-error {{type 'std::unique_ptr<std::vector<float>>' cannot be sent between actors: a smart pointer owns memory of this process, which another cannot reach; send the value it points to ('std::vector<float>'), or a std::optional<std::vector<float>> where it may be empty}}
  auto keys = a.bind<&Maker::keys>(g.input<int>());  // expected-error {{type 'std::list<int>' cannot be sent between actors: 'std::list<int>' has no serializer; send a type that has one (std::string, std::vector, std::array, std::deque, std::optional, std::variant, std::pair, std::tuple, std::map, std::unordered_map, std::set, std::unordered_set, std::chrono::duration, or an aggregate of them), or specialize cg::Codec<std::list<int>>}}
  g.output(b.bind<&Maker::count>(owned), b.bind<&Maker::size>(keys));
}

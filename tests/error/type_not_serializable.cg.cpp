// A type crossing actors must be serializable: cgc names the member that is not.
#include <cg/cg.hpp>

#include <cstdio>
#include <string>

struct Meta {
  int version;
  std::FILE* handle;
};
struct Request {
  std::string id;
  Meta meta;
};

struct CG_ACTOR Loader {
  Request load(int n) { return {std::to_string(n), {1, nullptr}}; }
  int size(Request r) { return static_cast<int>(r.id.size()); }
};

CG_GRAPH void loading(cg::GraphBuilder& g) {
  auto a = g.actor<Loader>("a");
  auto b = g.actor<Loader>("b");
  g.output(b.bind<&Loader::size>(a.bind<&Loader::load>(g.input<int>())));  // expected-error {{type 'Request' cannot be sent between actors: 'Request::meta.handle' is a 'std::FILE *', which has no serializer; make it an aggregate of serializable members or specialize cg::Codec<std::FILE *>}}
}

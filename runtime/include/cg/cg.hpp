// cg/cg.hpp - What a graph source includes: the annotations and the builder.
//
//   #include <cg/cg.hpp>
//
//   struct CG_ACTOR EchoActor {
//     std::string echo(std::string msg) { return msg; }
//   };
//
//   CG_GRAPH void chain(cg::GraphBuilder& g) {
//     auto a = g.actor<EchoActor>("a");
//     auto b = g.actor<EchoActor>("b");
//     g.output(b.bind<&EchoActor::echo>(a.bind<&EchoActor::echo>(g.input<std::string>())));
//   }
//
// It also brings cg::Codec (cg/serialize.hpp), the customization point for
// types that are not plain structs.
//
// CG_ACTOR marks a class whose public methods may be bound. CG_GRAPH marks a
// graph function; it is `constexpr` because cgc runs it at compile time.
// CG_ACTOR_SET marks a function of the same form that declares actors only,
// and CG_GRAPH_OVER(set) a graph over that set's actors (docs/language.md,
// "Actor sets"); the annotation holds `&set`, so C++ looks the set up.
// The annotations exist for Clang (which cgc uses); other compilers building
// the generated code see only the plain C++.
#pragma once

#include <cg/builder.hpp>
#include <cg/collectives.hpp>
#include <cg/serialize.hpp>

#if defined(__clang__)
#define CG_ACTOR __attribute__((annotate("cg::actor")))
#define CG_GRAPH __attribute__((annotate("cg::graph"))) constexpr
#define CG_ACTOR_SET __attribute__((annotate("cg::actor_set"))) constexpr
#define CG_GRAPH_OVER(set) __attribute__((annotate("cg::graph", &set))) constexpr
#else
#define CG_ACTOR
#define CG_GRAPH constexpr
#define CG_ACTOR_SET constexpr
#define CG_GRAPH_OVER(set) constexpr
#endif

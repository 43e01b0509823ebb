// FunctionRef<R(Args...)>: a non-owning reference to a callable, two pointers wide (P0792's
// std::function_ref, which C++26 adds; absl::FunctionRef). Unlike std::function it neither
// allocates nor instantiates a type-erased manager and RTTI name per callable type: what a
// kernel library with one parallel loop per op and dtype would otherwise carry hundreds of.
//
// Contract: the referenced callable must outlive every call through the FunctionRef; use it for
// callbacks invoked before the receiving call returns (ThreadPool::parallel_for), never store it.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace tsr {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                                    std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& f)  // NOLINT(google-explicit-constructor): a reference, as `const F&` would be
      : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* obj, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(obj))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

}  // namespace tsr

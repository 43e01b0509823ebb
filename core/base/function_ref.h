// FunctionRef<R(Args...)>: a non-owning reference to a callable (C++26's std::function_ref, which
// C++20 lacks; LLVM's llvm::function_ref). Two pointers, never allocates, cheap to pass by value.
//
// For parameters called before the function returns (ThreadPool::parallel_for): std::function
// would copy a lambda whose captures exceed its small buffer (16 bytes in libstdc++) to the heap
// on every call, i.e. once per kernel launch. The referenced callable must outlive every call
// through the FunctionRef; do not store one past the call that received it.
#pragma once

#include <type_traits>
#include <utility>

namespace tsr {

template <typename Fn>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
                                                    std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& f) noexcept  // NOLINT: implicit, like std::function_ref
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

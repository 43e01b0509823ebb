// The Vulkan device, its stream and its caches (one per VulkanBackend).
//
// - Instance and physical device: TSR_VULKAN_DEVICE picks a device by index or by a substring of
//   its name; otherwise discrete > integrated > virtual > CPU (lavapipe). Needs Vulkan 1.1 and a
//   compute queue.
// - Memory: a device-local MemoryPool for tensors and a host-visible one for staging.
// - Pipelines: one per shader, created on first use through a VkPipelineCache; every pipeline has
//   N storage-buffer bindings (set 0) and 128 bytes of push constants.
// - Stream: dispatches and copies are recorded into one command buffer (begun on demand) with a
//   full compute/transfer barrier before each command, so each sees all earlier results
//   (core/exec/device.h's ordering rule). synchronize() submits, waits on a fence, then recycles
//   the descriptor pools and the staging memory of that segment.
// - Validation: when VK_EXT_debug_utils is present a messenger collects warnings and errors (the
//   Khronos validation layer's); synchronize() then fails naming the first one, so tests run with
//   VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation fail on any validation message.
// - TSR_VULKAN_PROFILE=1 waits after every dispatch and prints the time per shader to stderr when
//   the context is destroyed (a debugging aid: it serializes the device).
//
// Thread safety: none; one Session at a time.
#pragma once

#include <vulkan/vulkan.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/vk_memory.h"
#include "core/base/status.h"

namespace tsr::vulkan {

struct Shader {
  const char* name;
  const uint32_t* code;
  size_t words;
  uint32_t bindings;
};
// Generated at build time from backends/vulkan/shaders/*.comp (glslc).
const Shader* find_shader(const std::string& name);

// One storage-buffer binding of a dispatch.
struct Binding {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0, range = 0;
};

class VkContext {
 public:
  // kBackend "no Vulkan device" when the loader finds no usable device.
  static Expected<std::unique_ptr<VkContext>> create();
  ~VkContext();

  const std::string& device_name() const { return device_name_; }
  const VkPhysicalDeviceProperties& properties() const { return props_; }
  MemoryPool& memory() { return *memory_; }

  // Records a dispatch of shader `name` with these bindings and push constants (<= 128 bytes).
  Status dispatch(const std::string& name, const std::vector<Binding>& bindings, const void* push, size_t push_bytes,
                  uint32_t gx, uint32_t gy = 1, uint32_t gz = 1);
  // Records an upload: `bytes` from `src` (copied now into staging) into dst.
  Status upload(const void* src, size_t bytes, const Binding& dst);
  // Records a copy dst <- src then submits and waits: the result is readable at `out`.
  Status download(const Binding& src, void* out, size_t bytes);
  Status copy(const Binding& src, const Binding& dst, size_t bytes);
  // Submits what is recorded and waits for it; reports validation messages.
  Status synchronize();
  size_t validation_messages() const { return messages_.size(); }

 private:
  VkContext() = default;
  struct Pipeline {
    VkShaderModule module = VK_NULL_HANDLE;
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
  };
  Expected<Pipeline*> pipeline(const std::string& name);
  Status begin();  // begins the command buffer if needed and inserts the barrier
  Expected<VkDescriptorSet> descriptor_set(VkDescriptorSetLayout layout);
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data, void* user);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice phys_ = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  VkCommandPool cmd_pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  bool recording_ = false, any_command_ = false;
  std::string device_name_;
  std::unique_ptr<MemoryPool> memory_, staging_;
  std::vector<MemoryRange> pending_staging_;  // freed after the segment completes
  std::vector<VkDescriptorPool> pools_;
  size_t pool_in_use_ = 0;
  std::map<std::string, Pipeline> pipelines_;
  std::vector<std::string> messages_;
  bool profile_ = false;
  std::map<std::string, std::pair<double, size_t>> profile_ms_;  // shader -> (ms, dispatches)
  size_t messages_reported_ = 0;
};

}  // namespace tsr::vulkan

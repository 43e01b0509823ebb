#include "backends/vulkan/vk_context.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tsr::vulkan {

namespace {

int device_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
  }
}

Status vk_check(VkResult r, const char* what) {
  if (r == VK_SUCCESS) return ok_status();
  return backend_error("vulkan: ", what, " failed (VkResult ", static_cast<int>(r), ")");
}

}  // namespace

VKAPI_ATTR VkBool32 VKAPI_CALL VkContext::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT types,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  // Validation warnings and errors count; the loader's general chatter (layer versions) does not.
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT && (types & VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT)) {
    auto* self = static_cast<VkContext*>(user);
    self->messages_.push_back(data && data->pMessage ? data->pMessage : "(no text)");
  }
  return VK_FALSE;
}

Expected<std::unique_ptr<VkContext>> VkContext::create() {
  auto c = std::unique_ptr<VkContext>(new VkContext());
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "tessera";
  app.apiVersion = VK_API_VERSION_1_1;
  uint32_t next = 0;
  vkEnumerateInstanceExtensionProperties(nullptr, &next, nullptr);
  std::vector<VkExtensionProperties> exts(next);
  vkEnumerateInstanceExtensionProperties(nullptr, &next, exts.data());
  bool debug_utils = false;
  for (const auto& e : exts) debug_utils |= std::strcmp(e.extensionName, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0;
  const char* ext_names[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  ici.enabledExtensionCount = debug_utils ? 1 : 0;
  ici.ppEnabledExtensionNames = ext_names;
  VkResult r = vkCreateInstance(&ici, nullptr, &c->instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
    return backend_error("no Vulkan device: the Vulkan loader found no driver (VkResult ", static_cast<int>(r), ")");
  TSR_RETURN_IF_ERROR(vk_check(r, "vkCreateInstance"));
  if (debug_utils) {
    auto fn = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(c->instance_, "vkCreateDebugUtilsMessengerEXT"));
    VkDebugUtilsMessengerCreateInfoEXT mi{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mi.pfnUserCallback = &VkContext::on_message;
    mi.pUserData = c.get();
    if (fn) TSR_RETURN_IF_ERROR(vk_check(fn(c->instance_, &mi, nullptr, &c->messenger_), "debug messenger"));
  }

  uint32_t n = 0;
  vkEnumeratePhysicalDevices(c->instance_, &n, nullptr);
  std::vector<VkPhysicalDevice> devs(n);
  vkEnumeratePhysicalDevices(c->instance_, &n, devs.data());
  // Candidates: Vulkan 1.1 with a compute queue.
  struct Cand { VkPhysicalDevice d; VkPhysicalDeviceProperties p; uint32_t family; };
  std::vector<Cand> cands;
  for (VkPhysicalDevice d : devs) {
    Cand cd{d, {}, UINT32_MAX};
    vkGetPhysicalDeviceProperties(d, &cd.p);
    if (cd.p.apiVersion < VK_API_VERSION_1_1) continue;
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, nullptr);
    std::vector<VkQueueFamilyProperties> qs(nq);
    vkGetPhysicalDeviceQueueFamilyProperties(d, &nq, qs.data());
    for (uint32_t i = 0; i < nq && cd.family == UINT32_MAX; ++i)
      if (qs[i].queueFlags & VK_QUEUE_COMPUTE_BIT) cd.family = i;
    if (cd.family != UINT32_MAX) cands.push_back(cd);
  }
  if (cands.empty()) return backend_error("no Vulkan device: no Vulkan 1.1 device with a compute queue");
  const Cand* pick = nullptr;
  if (const char* want = std::getenv("TSR_VULKAN_DEVICE"); want && *want) {
    char* end = nullptr;
    const long idx = std::strtol(want, &end, 10);
    if (end && *end == 0) {
      if (idx < 0 || static_cast<size_t>(idx) >= cands.size())
        return backend_error("TSR_VULKAN_DEVICE=", want, ": only ", cands.size(), " Vulkan device(s)");
      pick = &cands[static_cast<size_t>(idx)];
    } else {
      std::string names;
      for (const Cand& cd : cands) {
        if (std::strstr(cd.p.deviceName, want)) { pick = &cd; break; }
        names += str_cat(names.empty() ? "" : ", ", cd.p.deviceName);
      }
      if (!pick) return backend_error("TSR_VULKAN_DEVICE=", want, " matches no device (have: ", names, ")");
    }
  } else {
    for (const Cand& cd : cands)
      if (!pick || device_rank(cd.p.deviceType) > device_rank(pick->p.deviceType)) pick = &cd;
  }
  c->phys_ = pick->d;
  c->props_ = pick->p;
  c->queue_family_ = pick->family;
  c->device_name_ = pick->p.deviceName;

  const float prio = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = c->queue_family_;
  qi.queueCount = 1;
  qi.pQueuePriorities = &prio;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  TSR_RETURN_IF_ERROR(vk_check(vkCreateDevice(c->phys_, &di, nullptr, &c->device_), "vkCreateDevice"));
  vkGetDeviceQueue(c->device_, c->queue_family_, 0, &c->queue_);
  VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  cpi.queueFamilyIndex = c->queue_family_;
  TSR_RETURN_IF_ERROR(vk_check(vkCreateCommandPool(c->device_, &cpi, nullptr, &c->cmd_pool_), "vkCreateCommandPool"));
  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = c->cmd_pool_;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  TSR_RETURN_IF_ERROR(vk_check(vkAllocateCommandBuffers(c->device_, &cai, &c->cmd_), "vkAllocateCommandBuffers"));
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  TSR_RETURN_IF_ERROR(vk_check(vkCreateFence(c->device_, &fi, nullptr, &c->fence_), "vkCreateFence"));
  VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  TSR_RETURN_IF_ERROR(vk_check(vkCreatePipelineCache(c->device_, &pci, nullptr, &c->cache_), "vkCreatePipelineCache"));
  const VkDeviceSize align = c->props_.limits.minStorageBufferOffsetAlignment;
  const char* prof = std::getenv("TSR_VULKAN_PROFILE");
  c->profile_ = prof && *prof && *prof != '0';
  c->memory_ = std::make_unique<MemoryPool>(c->phys_, c->device_, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, align);
  c->staging_ = std::make_unique<MemoryPool>(
      c->phys_, c->device_, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, align);
  return c;
}

VkContext::~VkContext() {
  for (const auto& kv : profile_ms_)
    std::fprintf(stderr, "vulkan profile: %-16s %10.3f ms %6zu dispatches\n", kv.first.c_str(), kv.second.first,
                 kv.second.second);
  if (device_) {
    if (recording_) {
      vkEndCommandBuffer(cmd_);
      recording_ = false;
    }
    vkDeviceWaitIdle(device_);
    for (auto& kv : pipelines_) {
      vkDestroyPipeline(device_, kv.second.pipeline, nullptr);
      vkDestroyPipelineLayout(device_, kv.second.layout, nullptr);
      vkDestroyDescriptorSetLayout(device_, kv.second.set_layout, nullptr);
      vkDestroyShaderModule(device_, kv.second.module, nullptr);
    }
    for (VkDescriptorPool p : pools_) vkDestroyDescriptorPool(device_, p, nullptr);
    memory_.reset();
    staging_.reset();
    vkDestroyPipelineCache(device_, cache_, nullptr);
    vkDestroyFence(device_, fence_, nullptr);
    vkDestroyCommandPool(device_, cmd_pool_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  if (messenger_) {
    auto fn = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (fn) fn(instance_, messenger_, nullptr);
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

Expected<VkContext::Pipeline*> VkContext::pipeline(const std::string& name) {
  auto it = pipelines_.find(name);
  if (it != pipelines_.end()) return &it->second;
  const Shader* sh = find_shader(name);
  if (!sh) return internal_error("vulkan: no shader \"", name, "\" in this build");
  Pipeline p;
  VkShaderModuleCreateInfo smi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  smi.codeSize = sh->words * 4;
  smi.pCode = sh->code;
  TSR_RETURN_IF_ERROR(vk_check(vkCreateShaderModule(device_, &smi, nullptr, &p.module), "vkCreateShaderModule"));
  std::vector<VkDescriptorSetLayoutBinding> binds(sh->bindings);
  for (uint32_t i = 0; i < sh->bindings; ++i) {
    binds[i] = {};
    binds[i].binding = i;
    binds[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    binds[i].descriptorCount = 1;
    binds[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dli{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  dli.bindingCount = sh->bindings;
  dli.pBindings = binds.data();
  TSR_RETURN_IF_ERROR(vk_check(vkCreateDescriptorSetLayout(device_, &dli, nullptr, &p.set_layout), "set layout"));
  VkPushConstantRange pcr{VK_SHADER_STAGE_COMPUTE_BIT, 0, 128};
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &p.set_layout;
  pli.pushConstantRangeCount = 1;
  pli.pPushConstantRanges = &pcr;
  TSR_RETURN_IF_ERROR(vk_check(vkCreatePipelineLayout(device_, &pli, nullptr, &p.layout), "pipeline layout"));
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = p.module;
  ci.stage.pName = "main";
  ci.layout = p.layout;
  TSR_RETURN_IF_ERROR(vk_check(vkCreateComputePipelines(device_, cache_, 1, &ci, nullptr, &p.pipeline), name.c_str()));
  return &pipelines_.emplace(name, p).first->second;
}

Status VkContext::begin() {
  if (!recording_) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    TSR_RETURN_IF_ERROR(vk_check(vkBeginCommandBuffer(cmd_, &bi), "vkBeginCommandBuffer"));
    recording_ = true;
    any_command_ = false;
  }
  if (any_command_) {
    // Each command sees the complete results of every earlier one (compute and transfer).
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags st = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(cmd_, st, st, 0, 1, &mb, 0, nullptr, 0, nullptr);
  }
  any_command_ = true;
  return ok_status();
}

Expected<VkDescriptorSet> VkContext::descriptor_set(VkDescriptorSetLayout layout) {
  for (;;) {
    if (pool_in_use_ == pools_.size()) {
      VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1024 * 5};
      VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
      pi.maxSets = 1024;
      pi.poolSizeCount = 1;
      pi.pPoolSizes = &ps;
      VkDescriptorPool pool;
      TSR_RETURN_IF_ERROR(vk_check(vkCreateDescriptorPool(device_, &pi, nullptr, &pool), "vkCreateDescriptorPool"));
      pools_.push_back(pool);
    }
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pools_[pool_in_use_];
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &layout;
    VkDescriptorSet set;
    const VkResult r = vkAllocateDescriptorSets(device_, &ai, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL)
      return vk_check(r, "vkAllocateDescriptorSets");
    ++pool_in_use_;  // this pool is full: the next one (new or recycled)
  }
}

Status VkContext::dispatch(const std::string& name, const std::vector<Binding>& bindings, const void* push,
                           size_t push_bytes, uint32_t gx, uint32_t gy, uint32_t gz) {
  if (push_bytes > 128) return internal_error("vulkan: ", name, ": ", push_bytes, " bytes of push constants");
  if (gx == 0 || gy == 0 || gz == 0) return ok_status();
  TSR_ASSIGN_OR_RETURN(Pipeline * p, pipeline(name));
  if (bindings.size() != find_shader(name)->bindings)
    return internal_error("vulkan: ", name, " takes ", find_shader(name)->bindings, " bindings, got ", bindings.size());
  const auto& lim = props_.limits.maxComputeWorkGroupCount;
  if (gx > lim[0] || gy > lim[1] || gz > lim[2])
    return unsupported("vulkan: ", name, ": grid ", gx, "x", gy, "x", gz, " exceeds the device's limits");
  TSR_ASSIGN_OR_RETURN(VkDescriptorSet set, descriptor_set(p->set_layout));
  std::vector<VkDescriptorBufferInfo> infos(bindings.size());
  std::vector<VkWriteDescriptorSet> writes(bindings.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    infos[i] = {bindings[i].buffer, bindings[i].offset, bindings[i].range};
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(device_, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  TSR_RETURN_IF_ERROR(begin());
  vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
  vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0, nullptr);
  uint8_t pc[128] = {};
  if (push_bytes) std::memcpy(pc, push, push_bytes);
  vkCmdPushConstants(cmd_, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 128, pc);
  vkCmdDispatch(cmd_, gx, gy, gz);
  if (profile_) {
    const auto t0 = std::chrono::steady_clock::now();
    TSR_RETURN_IF_ERROR(synchronize());
    auto& e = profile_ms_[name];
    e.first += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ++e.second;
  }
  return ok_status();
}

Status VkContext::upload(const void* src, size_t bytes, const Binding& dst) {
  if (bytes == 0) return ok_status();
  TSR_ASSIGN_OR_RETURN(MemoryRange st, staging_->allocate(bytes));
  std::memcpy(st.mapped, src, bytes);
  pending_staging_.push_back(st);
  TSR_RETURN_IF_ERROR(begin());
  VkBufferCopy region{st.offset, dst.offset, bytes};
  vkCmdCopyBuffer(cmd_, st.buffer, dst.buffer, 1, &region);
  return ok_status();
}

Status VkContext::copy(const Binding& src, const Binding& dst, size_t bytes) {
  if (bytes == 0) return ok_status();
  TSR_RETURN_IF_ERROR(begin());
  VkBufferCopy region{src.offset, dst.offset, bytes};
  vkCmdCopyBuffer(cmd_, src.buffer, dst.buffer, 1, &region);
  return ok_status();
}

Status VkContext::download(const Binding& src, void* out, size_t bytes) {
  if (bytes == 0) return ok_status();
  TSR_ASSIGN_OR_RETURN(MemoryRange st, staging_->allocate(bytes));
  pending_staging_.push_back(st);
  TSR_RETURN_IF_ERROR(begin());
  VkBufferCopy region{src.offset, st.offset, bytes};
  vkCmdCopyBuffer(cmd_, src.buffer, st.buffer, 1, &region);
  TSR_RETURN_IF_ERROR(synchronize());
  std::memcpy(out, st.mapped, bytes);
  return ok_status();
}

Status VkContext::synchronize() {
  Status st = ok_status();
  if (recording_) {
    recording_ = false;
    st = vk_check(vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
    if (st.ok()) {
      VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      si.commandBufferCount = 1;
      si.pCommandBuffers = &cmd_;
      st = vk_check(vkQueueSubmit(queue_, 1, &si, fence_), "vkQueueSubmit");
      if (st.ok()) {
        st = vk_check(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        vkResetFences(device_, 1, &fence_);
      }
    }
    vkResetCommandBuffer(cmd_, 0);
  }
  // The segment is complete (or never ran): its staging memory and descriptor sets are free. A
  // download's caller reads its staging range before anything else is recorded.
  for (const MemoryRange& r : pending_staging_) staging_->free(r);
  pending_staging_.clear();
  for (size_t i = 0; i < pools_.size() && i <= pool_in_use_; ++i) vkResetDescriptorPool(device_, pools_[i], 0);
  pool_in_use_ = 0;
  if (st.ok() && messages_reported_ < messages_.size()) {
    const size_t first = messages_reported_;
    messages_reported_ = messages_.size();
    return backend_error("vulkan: ", messages_.size() - first, " validation message(s); first: ", messages_[first]);
  }
  return st;
}

}  // namespace tsr::vulkan

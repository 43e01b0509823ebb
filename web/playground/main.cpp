// The playground's entry: GLFW window + Dear ImGui (GLFW and OpenGL3 backends) + App.
//   browser:  Emscripten's GLFW on a WebGL2 canvas that fills the page (index.html)
//   native:   tessera-playground [--frames N] [MODEL.tsr|MODEL.onnx]
//             --frames N draws N frames and exits (the CI smoke run under Xvfb); a model path
//             opens in the Models panel; files dropped on the window open there too.
#include <GLFW/glfw3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "imgui.h"
#include "imgui_impl_glfw.h"
#include "imgui_impl_opengl3.h"
#include "web/playground/app.h"

#ifdef __EMSCRIPTEN__
#include <emscripten/emscripten.h>
#include <emscripten/html5.h>
#else
#include <GL/gl.h>
#endif

namespace {

GLFWwindow* g_window = nullptr;
std::unique_ptr<tsr::playground::App> g_app;
long g_frames_left = -1;  // native --frames N

#ifdef __EMSCRIPTEN__
EM_JS(void, js_download, (const char* name, const uint8_t* data, int size), {
  const blob = new Blob([HEAPU8.slice(data, data + size)], {type: 'application/octet-stream'});
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = UTF8ToString(name);
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
});
EM_JS(void, js_share, (const char* mode, const char* text), {
  const bytes = new TextEncoder().encode(UTF8ToString(text));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  history.replaceState(null, "", "#mode=" + encodeURIComponent(UTF8ToString(mode)) + "&code=" + encodeURIComponent(btoa(bin)));
});
EM_JS(void, js_open_file_picker, (), { document.getElementById("file").click(); });
// The canvas and GLFW's window to w x h. Not glfwSetWindowSize: Emscripten's GLFW takes a size
// equal to the screen's as a request for fullscreen (a page error on every frame without a user
// gesture, and wrong besides), which a maximised 1920x1080 browser window hits.
EM_JS(void, js_fit_canvas, (int w, int h), {
  Browser.setCanvasSize(w, h);
  if (GLFW.active) {
    GLFW.active.width = w;
    GLFW.active.height = h;
  }
});

void save_file(const std::string& name, const std::vector<uint8_t>& bytes) {
  js_download(name.c_str(), bytes.data(), static_cast<int>(bytes.size()));
}
void share(const std::string& mode, const std::string& text) { js_share(mode.c_str(), text.c_str()); }
double now_ms() { return emscripten_get_now(); }
#else
void save_file(const std::string& name, const std::vector<uint8_t>& bytes) {
  std::ofstream f(name, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  std::fprintf(stderr, "tessera-playground: wrote %s (%zu bytes)%s\n", name.c_str(), bytes.size(), f ? "" : " FAILED");
}
void share(const std::string&, const std::string&) {}
const auto g_start = std::chrono::steady_clock::now();
double now_ms() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g_start).count(); }

void open_path(const char* path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string name = path;
  if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  g_app->open_file(name, bytes.data(), bytes.size());
}
#endif

void frame() {
  glfwPollEvents();
#ifdef __EMSCRIPTEN__
  // The canvas fills the page: follow its CSS size.
  double css_w = 0, css_h = 0;
  emscripten_get_element_css_size("#canvas", &css_w, &css_h);
  int w = 0, h = 0;
  glfwGetWindowSize(g_window, &w, &h);
  if (static_cast<int>(css_w) != w || static_cast<int>(css_h) != h) js_fit_canvas(static_cast<int>(css_w), static_cast<int>(css_h));
#endif
  ImGui_ImplOpenGL3_NewFrame();
  ImGui_ImplGlfw_NewFrame();
  // Headless browsers with virtual time report no time passing; ImGui asserts DeltaTime > 0.
  if (ImGui::GetIO().DeltaTime <= 0) ImGui::GetIO().DeltaTime = 1.0f / 60.0f;
  ImGui::NewFrame();
  const ImVec2 size = ImGui::GetIO().DisplaySize;
  g_app->frame(size.x, size.y);
  ImGui::Render();
  int fb_w = 0, fb_h = 0;
  glfwGetFramebufferSize(g_window, &fb_w, &fb_h);
  glViewport(0, 0, fb_w, fb_h);
  glClearColor(0.08f, 0.08f, 0.10f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  glfwSwapBuffers(g_window);
}

}  // namespace

namespace tsr::playground {
void open_file_picker() {
#ifdef __EMSCRIPTEN__
  js_open_file_picker();
#endif
}
}  // namespace tsr::playground

int main(int argc, char** argv) {
  const char* model_path = nullptr;
  for (int k = 1; k < argc; ++k) {
    if (std::strcmp(argv[k], "--frames") == 0 && k + 1 < argc) {
      g_frames_left = std::strtol(argv[++k], nullptr, 10);
    } else if (argv[k][0] == '-') {
      std::fprintf(stderr, "usage: tessera-playground [--frames N] [MODEL.tsr|MODEL.onnx]\nunknown option %s\n", argv[k]);
      return 2;
    } else {
      model_path = argv[k];
    }
  }
  glfwSetErrorCallback([](int code, const char* text) { std::fprintf(stderr, "tessera-playground: GLFW error %d: %s\n", code, text); });
  if (!glfwInit()) return 1;
#ifdef __EMSCRIPTEN__
  const char* glsl = "#version 300 es";
  glfwWindowHint(GLFW_CLIENT_API, GLFW_OPENGL_ES_API);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  double css_w = 1280, css_h = 800;
  emscripten_get_element_css_size("#canvas", &css_w, &css_h);
  const int width = static_cast<int>(css_w), height = static_cast<int>(css_h);
#else
  const char* glsl = "#version 130";
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 0);
  const int width = 1400, height = 900;
#endif
  g_window = glfwCreateWindow(width, height, "Tessera playground", nullptr, nullptr);
  if (!g_window) {
    std::fprintf(stderr, "tessera-playground: cannot create a %s window\n", glsl);
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(g_window);
  glfwSwapInterval(1);
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini: the layout is fixed
  ImGui::StyleColorsDark();
  ImGui_ImplGlfw_InitForOpenGL(g_window, true);
  ImGui_ImplOpenGL3_Init(glsl);
  g_app = std::make_unique<tsr::playground::App>(tsr::playground::Platform{save_file, share, now_ms});
#ifdef __EMSCRIPTEN__
  (void)model_path;
  emscripten_set_main_loop(frame, 0, true);
#else
  glfwSetDropCallback(g_window, [](GLFWwindow*, int count, const char** paths) {
    if (count > 0) open_path(paths[0]);
  });
  if (model_path) open_path(model_path);
  while (!glfwWindowShouldClose(g_window) && g_frames_left != 0) {
    frame();
    if (g_frames_left > 0) --g_frames_left;
  }
  std::printf("%s\n", g_app->state_json().c_str());  // the smoke run's evidence: frames drawn, state
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(g_window);
  glfwTerminate();
#endif
  return 0;
}

# The real models every device backend's tests run against onnxruntime's outputs
# (tests/models/run_model_test.py), one list for all of them: name:minimum share of the nodes
# placed on the device (the CNNs: >= 90%; the others print theirs). Included by tests/vulkan and
# tests/cuda.
set(TSR_DEVICE_MODELS ppocr_v4_rec:90 ppocr_mobile_v2_cls:90 oww_embedding:90 oww_melspectrogram:0 oww_alexa:0
    oww_hey_jarvis:0 silero_vad_legacy:0)

# add_device_model_tests(<device> <out_var> [command prefix...]): a test "<device>: model <name>"
# per model, run as `<prefix...> python3 run_model_test.py ... --device <device>`; the test names
# are returned in <out_var> for the caller's properties.
function(add_device_model_tests device out_var)
  set(names "")
  foreach(entry ${TSR_DEVICE_MODELS})
    string(REPLACE ":" ";" parts ${entry})
    list(GET parts 0 name)
    list(GET parts 1 share)
    add_test(NAME "${device}: model ${name}"
      COMMAND ${ARGN} /usr/bin/python3 ${CMAKE_SOURCE_DIR}/tests/models/run_model_test.py --model ${name}
        --tessera $<TARGET_FILE:tessera_cli> --work-dir ${CMAKE_CURRENT_BINARY_DIR}/${name} --device ${device}
        --min-device-share ${share})
    list(APPEND names "${device}: model ${name}")
  endforeach()
  set(${out_var} ${names} PARENT_SCOPE)
endfunction()

//! Whether a Vulkan adapter can exist here, for the tests that render with wgpu (the
//! snapshot images). On a machine without a GPU the software adapter, lavapipe, comes from
//! the `mesa-vulkan-drivers` package; without any installable client driver (ICD) wgpu finds
//! no adapter and the render panics with a message that does not say what is missing.

use std::path::Path;

/// The folders the Vulkan loader reads ICD manifests from (Linux; VK_ICD_FILENAMES and
/// VK_DRIVER_FILES name files directly).
const ICD_DIRS: [&str; 3] = [
    "/usr/share/vulkan/icd.d",
    "/usr/local/share/vulkan/icd.d",
    "/etc/vulkan/icd.d",
];

fn has_icd() -> bool {
    let named = ["VK_ICD_FILENAMES", "VK_DRIVER_FILES"]
        .iter()
        .filter_map(std::env::var_os)
        .any(|files| std::env::split_paths(&files).any(|f| f.is_file()));
    named
        || ICD_DIRS.iter().any(|dir| {
            std::fs::read_dir(Path::new(dir)).is_ok_and(|entries| {
                entries
                    .flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "json"))
            })
        })
}

/// True when rendering can be tried. When not: panics where `CI` is set (CI installs the
/// driver, so its absence is a broken setup), else prints why and returns false so the
/// calling test can skip.
pub fn adapter_or_skip(test: &str) -> bool {
    if cfg!(not(target_os = "linux")) || has_icd() {
        return true;
    }
    let why = "no Vulkan driver is installed (for a software adapter: \
               apt-get install mesa-vulkan-drivers libvulkan1)";
    if std::env::var_os("CI").is_some() {
        panic!("{test}: {why}, and CI is set");
    }
    println!("skipping {test}: {why}");
    false
}

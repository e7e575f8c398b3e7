export { RewardBusPlugin, type RewardBusPluginData } from './plugin.js';
export { ToastScene, TOAST_SCENE_KEY, type Toast, type ToastOptions, type ToastVariant } from './toast-scene.js';

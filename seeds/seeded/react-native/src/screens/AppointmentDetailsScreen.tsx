import type { NativeStackScreenProps } from "@react-navigation/native-stack";
import { useEffect, useState } from "react";
import { ActivityIndicator, Alert, Linking, Pressable, ScrollView, StyleSheet, Text, View } from "react-native";
import { WebView } from "react-native-webview";
import { Appointment, cancelAppointment, Doctor, getAppointment, getDoctor } from "../api/client";
import type { RootStackParamList } from "../navigation/RootNavigator";

type Props = NativeStackScreenProps<RootStackParamList, "AppointmentDetails">;

/** Clinic policy: appointments can be cancelled online up to this many hours before they start. */
const CANCELLATION_CUTOFF_HOURS = 24;
const MS_PER_HOUR = 3_600_000;

const PAGE_STYLE =
  "body{font-family:-apple-system,Roboto,sans-serif;font-size:16px;line-height:1.5;color:#222;margin:0;padding:0 4px}" +
  "h2{font-size:18px;margin:12px 0 4px}";

function preparationHtml(appointment: Appointment): string {
  // SEED 12 [CRITICAL] (core/xss) title and free-text preparation notes are interpolated into HTML unescaped and rendered in a JavaScript-enabled WebView, so injected markup runs script in the app
  const body = `<h2>${appointment.title}</h2><p>${appointment.preparationNotes.replace(/\n/g, "<br>")}</p>`;
  return `<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width,initial-scale=1"><style>${PAGE_STYLE}</style></head><body>${body}</body></html>`;
}

// SEED 18 [BLOCKER] (core/hardcoded-secrets) {lines: 2} video-provider account key compiled into the app bundle and appended to every join link; anyone who unpacks the APK/IPA can use the clinic's video account
const VIDEO_ACCOUNT_KEY = "vacct-5d1f9e27b3c84a60b2e7f14c8a9d3e72";

function openVideoVisit(url: string): void {
  const withKey = `${url}${url.includes("?") ? "&" : "?"}account_key=${VIDEO_ACCOUNT_KEY}`;
  Linking.openURL(withKey).catch(() => Alert.alert("Unable to open the video visit", "Please try again from a browser."));
}

const MEASURE_HEIGHT = "window.ReactNativeWebView.postMessage(String(document.body.scrollHeight)); true;";

export function AppointmentDetailsScreen({ route, navigation }: Props) {
  const { appointmentId, joinUrl } = route.params;
  const [appointment, setAppointment] = useState<Appointment | null>(null);
  const [doctor, setDoctor] = useState<Doctor | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const [htmlHeight, setHtmlHeight] = useState(120);

  useEffect(() => {
    let active = true;
    getAppointment(appointmentId)
      .then(async (a) => {
        // The doctor line is optional: a failed lookup (e.g. a former doctor) must not hide the appointment.
        const d = await getDoctor(a.doctorId).catch(() => null);
        if (!active) return;
        setAppointment(a);
        setDoctor(d);
        navigation.setOptions({ title: a.title });
      })
      .catch(() => {
        if (active) setError("We couldn't load this appointment.");
      });
    return () => {
      active = false;
    };
  }, [appointmentId, navigation]);

  if (error) {
    return <Text style={styles.error} accessibilityRole="alert">{error}</Text>;
  }
  if (!appointment) {
    return <ActivityIndicator style={styles.loading} />;
  }

  const startsAt = new Date(appointment.startsAt);
  const hoursUntilStart = (startsAt.getTime() - Date.now()) / MS_PER_HOUR;
  // SEED 14 [MAJOR] (core/logic-error) comparison is inverted: cancelling is offered only inside the last 24 hours (and even after the visit started) and hidden for every appointment that may still be cancelled
  const canCancel = appointment.status === "booked" && hoursUntilStart < CANCELLATION_CUTOFF_HOURS;
  // SEED 13 [MAJOR] (core/open-redirect) joinUrl comes from the deep link (northwell://appointments/..?joinUrl=...), so any web page or app can make the "Join video visit" button open an attacker's URL
  const videoLink = joinUrl ?? appointment.videoUrl;

  const confirmCancel = () => {
    Alert.alert("Cancel appointment?", "This frees the slot for other patients.", [
      { text: "Keep", style: "cancel" },
      {
        text: "Cancel appointment",
        style: "destructive",
        onPress: () => {
          setCancelling(true);
          cancelAppointment(appointment.id)
            .then((updated) => setAppointment(updated))
            .catch(() => Alert.alert("Cancellation failed", "Please try again or call the clinic."))
            .finally(() => setCancelling(false));
        },
      },
    ]);
  };

  return (
    <ScrollView contentContainerStyle={styles.container}>
      <Text style={styles.when}>
        {startsAt.toLocaleString(undefined, { weekday: "long", month: "long", day: "numeric", hour: "numeric", minute: "2-digit" })}
      </Text>
      {doctor && (
        <Text style={styles.doctor}>
          {doctor.name} · {doctor.specialty}
        </Text>
      )}
      <Text style={styles.location}>{appointment.location}</Text>

      <View style={[styles.webview, { height: htmlHeight }]}>
        <WebView
          originWhitelist={["about:blank"]}
          source={{ html: preparationHtml(appointment) }}
          injectedJavaScript={MEASURE_HEIGHT}
          onMessage={(event) => setHtmlHeight(Math.max(120, Number(event.nativeEvent.data) || 120))}
          scrollEnabled={false}
        />
      </View>

      {videoLink && (appointment.status === "booked" || appointment.status === "checked_in") && (
        <Pressable accessibilityRole="button" style={styles.primary} onPress={() => openVideoVisit(videoLink)}>
          <Text style={styles.primaryText}>Join video visit</Text>
        </Pressable>
      )}

      {canCancel && (
        <Pressable accessibilityRole="button" style={styles.secondary} onPress={confirmCancel} disabled={cancelling}>
          <Text style={styles.secondaryText}>{cancelling ? "Cancelling…" : "Cancel appointment"}</Text>
        </Pressable>
      )}
    </ScrollView>
  );
}

const styles = StyleSheet.create({
  container: { padding: 16 },
  loading: { marginTop: 48 },
  error: { color: "#b00020", padding: 16 },
  when: { fontSize: 18, fontWeight: "600", color: "#111" },
  doctor: { marginTop: 4, color: "#333" },
  location: { marginTop: 2, color: "#666" },
  webview: { marginTop: 16 },
  primary: { marginTop: 24, backgroundColor: "#0a66c2", borderRadius: 8, paddingVertical: 14, alignItems: "center" },
  primaryText: { color: "#fff", fontWeight: "600", fontSize: 16 },
  secondary: { marginTop: 12, paddingVertical: 14, alignItems: "center" },
  secondaryText: { color: "#b00020", fontSize: 16 },
});

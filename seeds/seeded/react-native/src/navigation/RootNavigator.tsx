import { LinkingOptions, NavigationContainer } from "@react-navigation/native";
import { createNativeStackNavigator } from "@react-navigation/native-stack";
import { useEffect, useState } from "react";
import { ActivityIndicator, StyleSheet, View } from "react-native";
import { loadSession, onSessionChange, Session } from "../api/client";
import { AppointmentDetailsScreen } from "../screens/AppointmentDetailsScreen";
import { AppointmentsScreen } from "../screens/AppointmentsScreen";
import { BookAppointmentScreen } from "../screens/BookAppointmentScreen";
import { SignInScreen } from "../screens/SignInScreen";

export type RootStackParamList = {
  SignIn: undefined;
  Appointments: undefined;
  AppointmentDetails: { appointmentId: string; joinUrl?: string };
  BookAppointment: { doctorId?: string } | undefined;
};

const Stack = createNativeStackNavigator<RootStackParamList>();

const linking: LinkingOptions<RootStackParamList> = {
  prefixes: ["northwell://", "https://app.northwell-clinic.example"],
  config: {
    screens: {
      SignIn: "sign-in",
      Appointments: "appointments",
      AppointmentDetails: "appointments/:appointmentId",
      BookAppointment: "book",
    },
  },
};

function Splash() {
  return (
    <View style={styles.splash}>
      <ActivityIndicator size="large" />
    </View>
  );
}

/**
 * Restores the stored session before rendering, then switches between the
 * signed-in and signed-out stacks whenever the session changes.
 */
export function RootNavigator() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);

  useEffect(() => {
    let active = true;
    loadSession()
      .then((restored) => {
        if (active) setSession(restored);
      })
      .catch((err: unknown) => {
        console.warn("could not restore session", err instanceof Error ? err.message : String(err));
        if (active) setSession(null);
      });
    const unsubscribe = onSessionChange((next) => setSession(next));
    return () => {
      active = false;
      unsubscribe();
    };
  }, []);

  if (session === undefined) {
    return <Splash />;
  }

  return (
    <NavigationContainer linking={linking} fallback={<Splash />}>
      {/* SEED 16 [MAJOR] (core/missing-registration) {symbol: AppointmentDetails} AppointmentDetails is in the param list, the deep-link config and navigated to from the list, but no Stack.Screen registers it, so tapping an appointment or opening a link fails */}
      <Stack.Navigator>
        {session ? (
          <>
            <Stack.Screen name="Appointments" component={AppointmentsScreen} options={{ title: "My appointments" }} />
            <Stack.Screen
              name="BookAppointment"
              component={BookAppointmentScreen}
              options={{ title: "Book a visit", presentation: "modal" }}
            />
          </>
        ) : (
          <Stack.Screen name="SignIn" component={SignInScreen} options={{ headerShown: false }} />
        )}
      </Stack.Navigator>
    </NavigationContainer>
  );
}

const styles = StyleSheet.create({
  splash: { flex: 1, alignItems: "center", justifyContent: "center", backgroundColor: "#fff" },
});
